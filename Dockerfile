# sluice in a container: a build stage with the Rust toolchain, and a small
# runtime stage that holds the binary alone, runs it as a non-root user,
# keeps its data in a volume and checks /health.
#
#   docker build --build-arg SLUICE_COMMIT=$(git rev-parse --short=12 HEAD) -t sluice .
#   docker run -p 9324:9324 -v sluice-data:/var/lib/sluice sluice \
#       serve --bind 0.0.0.0:9324 --data-dir /var/lib/sluice --allow-anonymous
#
# Without `--allow-anonymous` (or a config file with `[auth]`, mounted at
# /etc/sluice/sluice.toml and named with `--config`), a server bound to a
# non-loopback address refuses to start: see docs/security.md.
#
# The build copies no .git (see .dockerignore): SLUICE_COMMIT names the
# commit that `sluice --version` reports. The health check asks
# http://127.0.0.1:9324/health in plain HTTP: a server on another port, or
# one serving HTTPS on it, needs a HEALTHCHECK of its own.

FROM rust:1-bookworm AS build
ARG SLUICE_COMMIT=""
WORKDIR /src
COPY . .
RUN SLUICE_BUILD_COMMIT="$SLUICE_COMMIT" cargo build --release --locked -p sluice \
    && strip target/release/sluice \
    && cp target/release/sluice /usr/local/bin/sluice

FROM debian:bookworm-slim
RUN useradd --system --home-dir /var/lib/sluice --shell /usr/sbin/nologin sluice \
    && mkdir -p /var/lib/sluice /etc/sluice \
    && chown sluice:sluice /var/lib/sluice
COPY --from=build /usr/local/bin/sluice /usr/local/bin/sluice
USER sluice
WORKDIR /var/lib/sluice
VOLUME ["/var/lib/sluice"]
EXPOSE 9324
# bash's /dev/tcp: the slim image has no curl, and needs none.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["/bin/bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/9324 && printf 'GET /health HTTP/1.0\\r\\n\\r\\n' >&3 && grep -q '^ok' <&3"]
ENTRYPOINT ["/usr/local/bin/sluice"]
CMD ["serve", "--bind", "0.0.0.0:9324", "--data-dir", "/var/lib/sluice", "--config", "/etc/sluice/sluice.toml"]
