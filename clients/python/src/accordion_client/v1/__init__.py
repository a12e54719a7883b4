"""Generated code for proto/accordion/v1 (``make proto`` writes it beside the service's copy).

Never edit the ``*_pb2*`` files by hand: ``make proto-check`` fails when they differ from a
fresh generation. They are protoc's output with the imports pointed at ``accordion_client.v1``;
the descriptors are byte-identical to the service's ``accordion.v1``, so both load in one process.
"""
