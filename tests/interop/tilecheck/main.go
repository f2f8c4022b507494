// Command tilecheck reads a recordseal log over HTTP as c2sp.org/tlog-tiles and checks it with
// Go's reference implementation of signed notes and tiled transparency logs
// (golang.org/x/mod/sumdb/note and sumdb/tlog), which shares no code with recordseal.
//
// It reads one JSON document on standard input:
//
//	{"prefix": "http://host/logs/<origin>", "authorization": "Bearer ...", "vkey": "<log vkey>",
//	 "leaves": ["<hex chain leaf>", ...], "old": "<an earlier signed checkpoint>" (optional),
//	 "tamper": false}
//
// and writes one JSON line per check: {"name": "...", "ok": true} or {"name": "...", "ok":
// false, "error": "..."}; the line "entries" also lists the log's entries (base64).
//
//   - "checkpoint": GET <prefix>/checkpoint opens with the vkey (note.Open) and parses.
//   - "leaf <hex>": the chain leaf is a leaf hash of the tree (read through
//     tlog.TileHashReader, which authenticates every tile against the checkpoint's root), and
//     tlog.ProveRecord's proof from the tiles passes tlog.CheckRecord.
//   - "entries": every entry bundle parses (big-endian uint16 length prefixes), holds the
//     bundle's width of entries, and each entry's tlog.RecordHash is the tile's leaf hash.
//   - "consistency": tlog.ProveTree from the old checkpoint's size passes tlog.CheckTree.
//
// With "tamper", one bit of every hash tile read is flipped: every proof must then fail.
package main

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type input struct {
	Prefix        string   `json:"prefix"`
	Authorization string   `json:"authorization"`
	VKey          string   `json:"vkey"`
	Leaves        []string `json:"leaves"`
	Old           string   `json:"old"`
	Tamper        bool     `json:"tamper"`
}

type outcome struct {
	Name    string   `json:"name"`
	OK      bool     `json:"ok"`
	Error   string   `json:"error,omitempty"`
	Entries []string `json:"entries,omitempty"`
}

type client struct {
	prefix, authorization string
}

// get fetches <prefix>/<name>; Go's transport asks for gzip and decompresses it itself.
func (c client) get(name string) ([]byte, error) {
	request, err := http.NewRequest("GET", c.prefix+"/"+name, nil)
	if err != nil {
		return nil, err
	}
	if c.authorization != "" {
		request.Header.Set("Authorization", c.authorization)
	}
	response, err := http.DefaultClient.Do(request)
	if err != nil {
		return nil, err
	}
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		return nil, err
	}
	if response.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", name, response.Status)
	}
	return body, nil
}

// c2spPath is the C2SP name of a tile: Go's sumdb path without its height segment
// ("tile/8/0/001.p/5" is "tile/0/001.p/5"; level -1, Go's data tiles, are entry bundles).
func c2spPath(t tlog.Tile) string {
	path := strings.Replace(t.Path(), "tile/8/", "tile/", 1)
	return strings.Replace(path, "tile/data/", "tile/entries/", 1)
}

// tiles is the tlog.TileReader of the served hash tiles.
type tiles struct {
	client client
	tamper bool
}

func (tiles) Height() int { return 8 }

func (r tiles) ReadTiles(wanted []tlog.Tile) ([][]byte, error) {
	data := make([][]byte, len(wanted))
	for i, t := range wanted {
		body, err := r.client.get(c2spPath(t))
		if err != nil {
			return nil, err
		}
		if len(body) != t.W*tlog.HashSize {
			return nil, fmt.Errorf("%s: %d bytes, not %d", c2spPath(t), len(body), t.W*tlog.HashSize)
		}
		if r.tamper {
			body[len(body)-1] ^= 1
		}
		data[i] = body
	}
	return data, nil
}

func (tiles) SaveTiles([]tlog.Tile, [][]byte) {}

func open(signed []byte, vkey string) (tlog.Tree, error) {
	verifier, err := note.NewVerifier(vkey)
	if err != nil {
		return tlog.Tree{}, err
	}
	opened, err := note.Open(signed, note.VerifierList(verifier))
	if err != nil {
		return tlog.Tree{}, fmt.Errorf("note: %w", err)
	}
	lines := strings.Split(opened.Text, "\n")
	if len(lines) < 4 {
		return tlog.Tree{}, errors.New("a checkpoint has an origin, a size and a root")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		return tlog.Tree{}, err
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return tlog.Tree{}, err
	}
	return tlog.Tree{N: size, Hash: root}, nil
}

// entries reads every entry bundle of the tree and checks it against the leaf hashes read from
// the tiles (leaves[i] is leaf i, or readErr when the tiles did not authenticate).
func entries(c client, tree tlog.Tree, leaves []tlog.Hash, readErr error) ([]string, error) {
	if readErr != nil {
		return nil, readErr
	}
	var all []string
	for n := int64(0); n*256 < tree.N; n++ {
		width := tree.N - n*256
		if width > 256 {
			width = 256
		}
		t := tlog.Tile{H: 8, L: -1, N: n, W: int(width)}
		body, err := c.get(c2spPath(t))
		if err != nil {
			return nil, err
		}
		var found [][]byte
		for len(body) > 0 {
			if len(body) < 2 {
				return nil, fmt.Errorf("%s ends inside a length", c2spPath(t))
			}
			length := int(binary.BigEndian.Uint16(body))
			if len(body) < 2+length {
				return nil, fmt.Errorf("%s: an entry runs past the end", c2spPath(t))
			}
			found = append(found, body[2:2+length])
			body = body[2+length:]
		}
		if len(found) != t.W {
			return nil, fmt.Errorf("%s holds %d entries, not %d", c2spPath(t), len(found), t.W)
		}
		for i, entry := range found {
			index := n*256 + int64(i)
			if tlog.RecordHash(entry) != leaves[index] {
				return nil, fmt.Errorf("entry %d does not hash to the tile's leaf %d", index, index)
			}
			all = append(all, base64.StdEncoding.EncodeToString(entry))
		}
	}
	return all, nil
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out := json.NewEncoder(os.Stdout)
	report := func(o outcome, err error) {
		if err != nil {
			o.Error = err.Error()
		} else {
			o.OK = true
		}
		out.Encode(o)
	}
	c := client{strings.TrimSuffix(in.Prefix, "/"), in.Authorization}
	signed, err := c.get("checkpoint")
	var tree tlog.Tree
	if err == nil {
		tree, err = open(signed, in.VKey)
	}
	report(outcome{Name: "checkpoint"}, err)
	if err != nil {
		return
	}
	hashes := tlog.TileHashReader(tree, tiles{c, in.Tamper})

	// Every leaf hash of the tree, authenticated by the tiles, to find each chain leaf's index.
	index := map[tlog.Hash]int64{}
	leafIndexes := make([]int64, tree.N)
	for i := range leafIndexes {
		leafIndexes[i] = tlog.StoredHashIndex(0, int64(i))
	}
	leaves, readErr := hashes.ReadHashes(leafIndexes)
	for i, leaf := range leaves {
		index[leaf] = int64(i)
	}
	for _, text := range in.Leaves {
		err := readErr
		if err == nil {
			var leaf tlog.Hash
			raw, decodeErr := hex.DecodeString(text)
			copy(leaf[:], raw)
			at, found := index[leaf]
			switch {
			case decodeErr != nil || len(raw) != tlog.HashSize:
				err = errors.New("not a hex hash")
			case !found:
				err = errors.New("not a leaf of the tree")
			default:
				var proof tlog.RecordProof
				proof, err = tlog.ProveRecord(tree.N, at, hashes)
				if err == nil {
					err = tlog.CheckRecord(proof, tree.N, tree.Hash, at, leaf)
				}
			}
		}
		report(outcome{Name: "leaf " + text}, err)
	}

	found, err := entries(c, tree, leaves, readErr)
	report(outcome{Name: "entries", Entries: found}, err)

	if in.Old != "" {
		old, err := open([]byte(in.Old), in.VKey)
		if err == nil {
			var proof tlog.TreeProof
			proof, err = tlog.ProveTree(tree.N, old.N, hashes)
			if err == nil {
				err = tlog.CheckTree(proof, tree.N, tree.Hash, old.N, old.Hash)
			}
		}
		report(outcome{Name: "consistency"}, err)
	}
}
