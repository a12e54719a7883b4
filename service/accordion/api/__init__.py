"""The gRPC face of the engine: servicer (protobuf ↔ engine), error mapping, auth, interceptors."""

from .interceptors import ObservabilityInterceptor
from .service import SERVICE_NAME, add_to_server
from .servicer import AccordionServicer

__all__ = ["SERVICE_NAME", "AccordionServicer", "ObservabilityInterceptor", "add_to_server"]
