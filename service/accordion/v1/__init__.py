"""Generated code for proto/accordion/v1 (``make proto``; never edit the ``*_pb2*`` files by hand)."""
