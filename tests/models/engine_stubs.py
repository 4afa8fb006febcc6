"""Stand-ins for vLLM's and SGLang's label-token log-prob requests, for tests.

SGLang has no CPU build on PyPI, and vLLM's (tested for real in
test_vllm_real.py) cannot be made to clamp a label or refuse echo on demand, so the
request shapes their sources document are answered by a small HTTP server whose
numbers come from a real ``llama_cpp.Llama`` on the bundled GGUF (the
:func:`server.reference_completions_server` handler: correct ``echo`` prompt
log-probs, top-k next-token log-probs), evaluated afresh for every request:

- ``POST /tokenize`` (vLLM and SGLang): ``{"prompt", "add_special_tokens"}`` ->
  ``{"tokens", "count", "max_model_len"}``;
- ``engine="vllm"``: ``/v1/completions`` with ``logprob_token_ids`` (``logprobs``
  required, HTTP 400 otherwise) answers ``top_logprobs[0]`` keyed ``"token_id:<id>"``
  (sampled token plus the requested ids, values clamped at -9999.0), as
  vLLM's ``_create_completion_logprobs`` with ``return_tokens_as_token_ids``;
  ``/generate`` is 404;
- ``engine="sglang"``: ``POST /generate`` with ``token_ids_logprob`` answers
  ``meta_info.output_token_ids_logprobs = [[[logprob, id, None], ...]]``;
  ``/v1/completions`` ignores ``logprob_token_ids`` (as a server without the field);
- ``engine="vllm-clamp"``: as ``vllm`` but the LAST requested id always comes back
  at the -9999.0 clamp; ``engine="vllm-clamp-noecho"`` also refuses ``echo`` (400);
- ``engine="plain"``: a completions server alone (``/tokenize`` and ``/generate`` 404).
"""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from server import _ReferenceHandler  # tests/models/server.py (on sys.path)

__all__ = ["ENGINES", "engine_server"]

ENGINES = ("vllm", "sglang", "vllm-clamp", "vllm-clamp-noecho", "plain")


class _EngineHandler(_ReferenceHandler):
    engine = "vllm"

    def _next_logprobs(self, prompt: str) -> tuple[np.ndarray, int]:
        llm = type(self).llm
        with type(self).lock:
            if type(self).closed:  # a late request on a server being torn down
                raise ConnectionAbortedError("the model is closed")
            ids = llm.tokenize(prompt.encode(), add_bos=True)
            llm.reset()
            llm.eval(ids)
            row = np.asarray(llm.scores[len(ids) - 1], dtype=np.float64)
        return row - np.logaddexp.reduce(row), len(ids)

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        req: dict[str, Any] = json.loads(raw)
        path = self.path.split("?")[0]
        engine = type(self).engine
        if engine == "plain" and not path.endswith("/completions"):
            self._send(404, {"detail": "Not Found"})
            return
        if path.endswith("/tokenize") and not path.endswith("/extras/tokenize"):
            with type(self).lock:
                if type(self).closed:
                    raise ConnectionAbortedError("the model is closed")
                ids = type(self).llm.tokenize(str(req["prompt"]).encode(),
                                              add_bos=bool(req.get("add_special_tokens", True)))
            self._send(200, {"tokens": ids, "count": len(ids), "max_model_len": 512})
            return
        if path.endswith("/generate"):
            if engine != "sglang":
                self._send(404, {"detail": "Not Found"})
                return
            logp, n = self._next_logprobs(str(req["text"]))
            want = [int(i) for i in req.get("token_ids_logprob") or []]
            self._send(200, {"text": "", "meta_info": {
                "prompt_tokens": n, "completion_tokens": 1, "cached_tokens": 0,
                "output_token_ids_logprobs": [[[float(logp[i]), i, None] for i in want]]}})
            return
        if engine == "vllm-clamp-noecho" and req.get("echo"):
            self._send(400, {"error": {"message": "echo is not allowed here"}})
            return
        want = req.get("logprob_token_ids")
        if want and engine.startswith("vllm"):
            if req.get("logprobs") is None:
                self._send(400, {"error": {"message": "when using `logprob_token_ids`, "
                                                      "`logprobs` must be set."}})
                return
            logp, _ = self._next_logprobs(str(req["prompt"]))
            gen = int(np.argmax(logp))
            top = {f"token_id:{gen}": max(float(logp[gen]), -9999.0)}
            for i in want:
                top[f"token_id:{int(i)}"] = max(float(logp[int(i)]), -9999.0)
            if engine.startswith("vllm-clamp"):
                top[f"token_id:{int(want[-1])}"] = -9999.0
            self._send(200, {"object": "text_completion", "model": "stub", "choices": [
                {"index": 0, "text": "", "finish_reason": "length", "logprobs": {
                    "tokens": [f"token_id:{gen}"], "token_logprobs": [top[f"token_id:{gen}"]],
                    "text_offset": [0], "top_logprobs": [top]}}]})
            return
        self.rfile = io.BytesIO(raw)  # the reference handler reads the body itself
        super().do_POST()


@contextlib.contextmanager
def engine_server(model_path: str | Path, engine: str) -> Iterator[str]:
    """Serve ``engine``'s request shapes (see the module docstring); yields the /v1 URL."""
    from activetest.models.llama_cpu import load_llama

    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    handler = type("Handler", (_EngineHandler,), {
        "llm": load_llama(model_path=str(model_path), n_ctx=512, n_threads=1,
                          n_threads_batch=1, logits_all=True, verbose=False),
        "lock": threading.Lock(), "max_logprobs": 20, "engine": engine})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
        # a handler thread may still be in a request (the server does not join them):
        # never free the model under a decode (llama.cpp aborts the whole process)
        with handler.lock:
            handler.closed = True
            handler.llm.close()
