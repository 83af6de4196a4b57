# azai in a small image: python:3.12-slim, the plan-only install (no Azure SDK), a non-root user.
#   docker build -t azai .                          plans, templates, what-if
#   docker build -t azai --build-arg EXTRAS=live .  and live scans (the Azure SDK)
#   docker run --rm --user "$(id -u):$(id -g)" -v "$PWD:/work" azai scan plan.json
# .dockerignore lets in only what the install reads.
FROM python:3.12-slim

ARG EXTRAS=""
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

COPY pyproject.toml README.md LICENSE /tmp/azai/
COPY scanner /tmp/azai/scanner
COPY checks /tmp/azai/checks
COPY reports /tmp/azai/reports
# One layer: the source and the build's leftovers are gone from the image.
RUN pip install "/tmp/azai${EXTRAS:+[$EXTRAS]}" \
    && rm -rf /tmp/azai \
    && useradd --create-home --uid 10001 azai

USER azai
WORKDIR /work
ENTRYPOINT ["azai"]
CMD ["--help"]
