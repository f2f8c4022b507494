// Command sumdbcheck checks recordseal's C2SP artifacts with Go's reference implementation of
// signed notes and transparency-log proofs (golang.org/x/mod/sumdb/note and sumdb/tlog), an
// implementation that shares no code with recordseal.
//
// It reads one JSON document on standard input:
//
//	{"vkey": "<the log's note verifier key>",
//	 "bundles": [{"name": "...", "bundle": <a disclosure bundle>, "entry": "<base64 log entry>"}],
//	 "trees": [{"name": "...", "old": "<signed checkpoint>", "new": "<signed checkpoint>",
//	            "proof": ["<base64 hash>", ...]}]}
//
// and writes one JSON line per item: {"name": "...", "ok": true} or {"name": "...", "ok":
// false, "error": "..."}. A bundle is accepted when its seal's checkpoint opens with the log's
// key (note.Open), states the bundle's log, and the seal's c2sp.org/tlog-proof@v1 inclusion
// proof places the entry at its index (tlog.CheckRecord); and when its previous checkpoint, if
// any, opens with the log's key and is a prefix of the sealing one (tlog.CheckTree). A tree is
// accepted when both checkpoints open and the proof shows the old one is a prefix of the new.
package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type seal struct {
	Log                 string   `json:"log"`
	Proof               string   `json:"proof"`
	Previous            *string  `json:"previous"`
	PreviousConsistency []string `json:"previous_consistency"`
}

type bundleCase struct {
	Name   string `json:"name"`
	Bundle struct {
		Seal *seal `json:"seal"`
	} `json:"bundle"`
	Entry string `json:"entry"`
}

type treeCase struct {
	Name  string   `json:"name"`
	Old   string   `json:"old"`
	New   string   `json:"new"`
	Proof []string `json:"proof"`
}

type input struct {
	VKey    string       `json:"vkey"`
	Bundles []bundleCase `json:"bundles"`
	Trees   []treeCase   `json:"trees"`
}

type outcome struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

type checkpoint struct {
	origin string
	size   int64
	root   tlog.Hash
}

// open verifies a signed checkpoint with the log's key and parses its body (C2SP
// tlog-checkpoint: origin, decimal size, base64 root hash, optional extension lines).
func open(signed string, verifiers note.Verifiers) (checkpoint, error) {
	opened, err := note.Open([]byte(signed), verifiers)
	if err != nil {
		return checkpoint{}, fmt.Errorf("note: %w", err)
	}
	lines := strings.Split(opened.Text, "\n")
	if len(lines) < 4 {
		return checkpoint{}, errors.New("checkpoint: fewer than three lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return checkpoint{}, errors.New("checkpoint: the size is not a decimal")
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		return checkpoint{}, fmt.Errorf("checkpoint: %w", err)
	}
	return checkpoint{lines[0], size, root}, nil
}

func hashes(encoded []string) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, 0, len(encoded))
	for _, text := range encoded {
		h, err := tlog.ParseHash(text)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// parseProof reads a c2sp.org/tlog-proof@v1: its index, inclusion hashes and checkpoint.
func parseProof(text string) (int64, []tlog.Hash, string, error) {
	head, signed, found := strings.Cut(text, "\n\n")
	if !found {
		return 0, nil, "", errors.New("tlog-proof: no blank line")
	}
	lines := strings.Split(head, "\n")
	if lines[0] != "c2sp.org/tlog-proof@v1" {
		return 0, nil, "", errors.New("tlog-proof: not c2sp.org/tlog-proof@v1")
	}
	lines = lines[1:]
	if len(lines) > 0 && strings.HasPrefix(lines[0], "extra ") {
		lines = lines[1:]
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "index ") {
		return 0, nil, "", errors.New("tlog-proof: no index line")
	}
	index, err := strconv.ParseInt(strings.TrimPrefix(lines[0], "index "), 10, 64)
	if err != nil {
		return 0, nil, "", errors.New("tlog-proof: the index is not a decimal")
	}
	proof, err := hashes(lines[1:])
	if err != nil {
		return 0, nil, "", fmt.Errorf("tlog-proof: %w", err)
	}
	return index, proof, signed, nil
}

func checkBundle(c bundleCase, verifiers note.Verifiers) error {
	s := c.Bundle.Seal
	if s == nil {
		return errors.New("the bundle has no seal")
	}
	entry, err := base64.StdEncoding.DecodeString(c.Entry)
	if err != nil {
		return fmt.Errorf("entry: %w", err)
	}
	index, proof, signed, err := parseProof(s.Proof)
	if err != nil {
		return err
	}
	sealing, err := open(signed, verifiers)
	if err != nil {
		return err
	}
	if sealing.origin != s.Log {
		return errors.New("the checkpoint is of another log")
	}
	if err := tlog.CheckRecord(proof, sealing.size, sealing.root, index, tlog.RecordHash(entry)); err != nil {
		return fmt.Errorf("inclusion: %w", err)
	}
	if s.Previous == nil {
		return nil
	}
	previous, err := open(*s.Previous, verifiers)
	if err != nil {
		return fmt.Errorf("previous: %w", err)
	}
	if previous.origin != s.Log {
		return errors.New("the previous checkpoint is of another log")
	}
	consistency, err := hashes(s.PreviousConsistency)
	if err != nil {
		return fmt.Errorf("previous consistency: %w", err)
	}
	if err := tlog.CheckTree(consistency, sealing.size, sealing.root, previous.size, previous.root); err != nil {
		return fmt.Errorf("previous consistency: %w", err)
	}
	return nil
}

func checkTree(c treeCase, verifiers note.Verifiers) error {
	old, err := open(c.Old, verifiers)
	if err != nil {
		return fmt.Errorf("old: %w", err)
	}
	newer, err := open(c.New, verifiers)
	if err != nil {
		return fmt.Errorf("new: %w", err)
	}
	if old.origin != newer.origin {
		return errors.New("the checkpoints are of two logs")
	}
	proof, err := hashes(c.Proof)
	if err != nil {
		return err
	}
	return tlog.CheckTree(proof, newer.size, newer.root, old.size, old.root)
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintln(os.Stderr, "sumdbcheck:", err)
		os.Exit(2)
	}
	verifier, err := note.NewVerifier(in.VKey)
	if err != nil {
		fmt.Fprintln(os.Stderr, "sumdbcheck: vkey:", err)
		os.Exit(2)
	}
	verifiers := note.VerifierList(verifier)
	out := json.NewEncoder(os.Stdout)
	report := func(name string, err error) {
		result := outcome{Name: name, OK: err == nil}
		if err != nil {
			result.Error = err.Error()
		}
		if err := out.Encode(result); err != nil {
			os.Exit(2)
		}
	}
	for _, c := range in.Bundles {
		report(c.Name, checkBundle(c, verifiers))
	}
	for _, c := range in.Trees {
		report(c.Name, checkTree(c, verifiers))
	}
}
