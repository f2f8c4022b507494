"""The ceiling for the load script: a Litestar endpoint that takes the same body and
decodes it the same way, but commits and stores nothing."""

import msgspec
from litestar import Litestar, Request, Response, post

from recordseal.web.schemas import RecordBody

_decode = msgspec.json.Decoder(RecordBody).decode


@post("/v1/records", status_code=201)
async def accept(request: Request) -> Response[bytes]:  # type: ignore[type-arg]
    _decode(await request.body())
    return Response(b'{"ok":true}', status_code=201, media_type="application/json")


app = Litestar([accept])
