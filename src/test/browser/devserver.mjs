// Development helper, not used by the tests: serves src/main/resources/webroot from disk (edit and
// reload, no rebuild) and passes everything else (/api, /health, /metrics, event streams) through
// to a running Taskline.
//
//   node src/test/browser/devserver.mjs [port=8098] [taskline=http://127.0.0.1:8080]

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const webroot = path.resolve(here, '../../main/resources/webroot');
const port = Number(process.argv[2] || 8098);
const upstream = new URL(process.argv[3] || 'http://127.0.0.1:8080');

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

function serveStatic(req, res) {
  const pathname = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const file = path.resolve(webroot, `.${pathname === '/' ? '/index.html' : pathname}`);
  if (!file.startsWith(webroot + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
    return false;
  }
  res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream', 'Cache-Control': 'no-cache' });
  fs.createReadStream(file).pipe(res);
  return true;
}

http.createServer((req, res) => {
  if (req.method === 'GET' && serveStatic(req, res)) {
    return;
  }
  const proxied = http.request({
    hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method,
    headers: { ...req.headers, host: upstream.host },
  }, (answer) => {
    res.writeHead(answer.statusCode, answer.headers);
    res.flushHeaders();
    answer.pipe(res);
  });
  proxied.on('error', (e) => {
    if (!res.headersSent) {
      res.writeHead(502, { 'Content-Type': 'application/problem+json' });
    }
    res.end(JSON.stringify({ title: 'Bad gateway', status: 502, detail: `Taskline at ${upstream.href} did not answer: ${e.message}` }));
  });
  res.on('close', () => proxied.destroy());
  req.pipe(proxied);
}).listen(port, '127.0.0.1', () => {
  console.log(`dashboard from ${webroot} on http://127.0.0.1:${port}/, API from ${upstream.href}`);
});
