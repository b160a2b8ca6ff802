# A small image of grail: a static (musl) binary on an empty base.
#   docker build -t grail .
#   docker run --rm -v "$PWD:/work" grail check guardrails/org.yaml
FROM rust:1.89-alpine AS build
# make: jemalloc (the allocator) builds with it.
RUN apk add --no-cache musl-dev make
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin grail && strip target/release/grail

FROM scratch
COPY --from=build /src/target/release/grail /grail
WORKDIR /work
ENTRYPOINT ["/grail"]
CMD ["--help"]
