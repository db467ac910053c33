"""A deterministic OpenAI-compatible embedding endpoint for the OpenViking test server.

``python embed_stub.py DIM`` binds 127.0.0.1 on a free port, prints the port on
one line, and serves ``POST /v1/embeddings`` until it is terminated. A vector is signed
feature hashing of the *set* of the text's lower-cased words (weight 2) and their
character trigrams (weight 0.5), L2-normalised, in DIM dimensions (default 4096,
so that unrelated texts rarely collide and score about 0.5). A set, not counts:
a long text that mentions a word once still matches it, as an embedding model
would. The same text always gives the same vector; texts that share words score
high. Text without any word (``%``, ``*``) gets one fixed vector. No network, no
model, stdlib only.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORDS = re.compile(r"\w+")


def vector(text: str, dim: int) -> list[float]:
    values = [0.0] * dim
    features: dict[str, float] = {}
    for word in set(WORDS.findall(text.lower())):
        features["w\0" + word] = 2.0
        padded = f"^{word}$"
        for start in range(len(padded) - 2):
            features["t\0" + padded[start : start + 3]] = 0.5
    for feature, weight in features.items():
        digest = int.from_bytes(hashlib.sha256(feature.encode("utf-8")).digest()[:8], "little")
        values[digest % dim] += weight if digest >> 63 else -weight
    norm = math.sqrt(sum(v * v for v in values))
    if norm == 0:
        values[dim - 1] = 1.0
        return values
    return [v / norm for v in values]


class Handler(BaseHTTPRequestHandler):
    dim = 4096

    def log_message(self, format: str, *args: object) -> None:
        return

    def _reply(self, status: int, payload: object) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            self._reply(200, {"object": "list", "data": [{"id": "rm-hash", "object": "model"}]})
        else:
            self._reply(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        if not self.path.rstrip("/").endswith("/embeddings"):
            self._reply(404, {"error": {"message": "not found"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._reply(400, {"error": {"message": "body is not JSON"}})
            return
        texts = request.get("input", "")
        if isinstance(texts, str):
            texts = [texts]
        as_base64 = request.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            values = vector(str(text), self.dim)
            embedding: object = (
                base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")
                if as_base64
                else values
            )
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(len(str(t).split()) for t in texts)
        self._reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": request.get("model", "rm-hash"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def main() -> None:
    Handler.dim = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
