"""The gRPC face of the service: the servicer (protobuf ↔ the session layer), error mapping, auth, and the one
per-method wrapper every served call goes through (``interceptors.wrap``, via ``Host``)."""

from .interceptors import Gate, Host
from .limits import Admission, Limits
from .service import SERVICE_NAME, add_to_server
from .servicer import AccordionServicer

__all__ = ["SERVICE_NAME", "AccordionServicer", "Admission", "Gate", "Host", "Limits", "add_to_server"]
