"""``?wait=<seconds>``: how long a disclosure or a proof refresh may wait for its proof."""

from __future__ import annotations

import re
from typing import Any

from litestar import Request
from litestar.enums import ParamType
from litestar.openapi.spec import OpenAPIType, Parameter, Schema

from recordseal.services.errors import Invalid
from recordseal.web.state import services_of

_SECONDS = re.compile(r"[0-9]{1,6}(\.[0-9]{1,6})?")

WAIT_PARAMETER = Parameter(
    name="wait",
    param_in=ParamType.QUERY,
    required=False,
    description=(
        "Seconds to wait for the record to be sealed and its checkpoint witnessed before"
        " answering (at most the service's max_wait_seconds, 60 by default); the answer is"
        " what there is when the time is up (docs/bundle.md, Waiting for a proof)"
    ),
    schema=Schema(type=OpenAPIType.NUMBER, minimum=0),
)


def wait_of(request: Request[Any, Any, Any]) -> float:
    """The ``wait`` query parameter in seconds (0 when absent); 422 ``wait_invalid`` for
    anything but one decimal number of seconds within the service's bound."""
    proofs = services_of(request).proofs
    values = request.query_params.getall("wait", [])
    if not values:
        return 0.0
    if len(values) > 1 or not _SECONDS.fullmatch(values[0]):
        raise Invalid(
            "wait_invalid",
            f"wait must be one decimal number of seconds from 0 to {proofs.max_wait:g}",
            "wait",
        )
    return proofs.check_wait(float(values[0]))
