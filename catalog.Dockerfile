# The file-based catalog image (what `opm generate dockerfile catalog`
# writes): opm serves catalog/ over gRPC to OLM's CatalogSource.
# Build it with `make catalog-build` (needs a container engine).
FROM quay.io/operator-framework/opm:v1.69.0
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
ADD catalog /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]
LABEL operators.operatorframework.io.index.configs.v1=/configs
