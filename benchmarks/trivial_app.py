"""The ceiling for the load script: a Litestar endpoint that takes the same body and
decodes it the same way, but commits and stores nothing. It runs with the service's collector
settings (recordseal.web.gc_tuning), as the same server settings."""

import msgspec
from litestar import Litestar, Request, Response, post

from recordseal.web.gc_tuning import tune_collector
from recordseal.web.schemas import BatchBody, RecordBody

_decode = msgspec.json.Decoder(RecordBody).decode
_decode_batch = msgspec.json.Decoder(BatchBody).decode


@post("/v1/records", status_code=201)
async def accept(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    _decode(await request.body())
    return Response(b'{"ok":true}', status_code=201, media_type="application/json")


@post("/v1/records:batch", status_code=200, request_max_body_size=32 * 1024 * 1024)
async def accept_batch(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    for raw in _decode_batch(await request.body()).records:
        _decode(raw)
    return Response(b'{"ok":true}', status_code=200, media_type="application/json")


tune_collector()  # the service's own collector settings, as recordseal.web.asgi applies them
app = Litestar([accept, accept_batch])
