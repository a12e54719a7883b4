# syntax=docker/dockerfile:1
# accordion-server: a small, non-root image with only the service's virtualenv.
#
#   docker build -t accordion-service .
#   docker run --rm -p 50051:50051 -e REDIS_URL=redis://redis:6379/0 accordion-service
#
# Stage 1 installs the package exactly as `make install` does (a venv, pip upgraded, then
# `pip install .`: the same commands without `-e` and the test extra; tests/deploy holds the
# two to each other). gcc is here for the solver's optional C core and stays in this stage.
# Stage 2 is the same Python base (so the venv's interpreter path is valid) plus the venv.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE ./
COPY service/ service/
RUN python3 -m venv /opt/venv
RUN /opt/venv/bin/pip install --quiet --upgrade pip
RUN /opt/venv/bin/pip install --quiet .
# Fail the build, not the first request, if the install is broken.
RUN /opt/venv/bin/accordion-server --help > /dev/null && /opt/venv/bin/accordion-health --help > /dev/null

FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="accordion-service" \
      org.opencontainers.image.description="Accordion patience as a stateless gRPC service"
RUN groupadd --system --gid 10001 accordion \
    && useradd --system --uid 10001 --gid accordion --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin accordion
COPY --from=builder /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    ACCORDION_LISTEN=0.0.0.0:50051
# Numeric, so Kubernetes' runAsNonRoot can verify it without /etc/passwd.
USER 10001:10001
# 50051: gRPC. 9090: /metrics when ACCORDION_METRICS_PORT=9090. 8081: the plaintext health-only
# port when ACCORDION_HEALTH_PORT=8081 (for probes, when the gRPC port speaks TLS).
EXPOSE 50051 9090 8081
# grpc.health.v1 Check on 127.0.0.1 (ACCORDION_HEALTH_PORT, else ACCORDION_LISTEN's port).
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 CMD ["accordion-health"]
# SIGTERM: health NOT_SERVING, then in-flight calls get ACCORDION_GRACE seconds (default 10).
STOPSIGNAL SIGTERM
ENTRYPOINT ["accordion-server"]
