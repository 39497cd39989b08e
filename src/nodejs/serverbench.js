#!/usr/bin/env node
// serverbench nodejs: the echo_flood server (net.createServer, every 'data' chunk written
// back, as the original). Flags come from spec/cli.json; lifecycle as docs/sockets.md:
// listening line, stop on stdin EOF / "stop" / SIGTERM / idle timeout.
'use strict';
const fs = require('fs');
const net = require('net');
const path = require('path');

const CLI = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'spec', 'cli.json'), 'utf8'));
const LANG = 'nodejs';
const BENCH = 'echo_flood';
const BACKLOG = 4096; // the kernel caps it at net.core.somaxconn

class Usage extends Error {}

function value(name, spec, text) {
  if (text === '') throw new Usage(`${name}: empty value`);
  if (spec.type === 'enum') {
    if (!spec.values.includes(text)) throw new Usage(`${name}: unknown value '${text}'`);
    return text;
  }
  const ok = spec.type === 'int' ? /^-?\d+$/.test(text) : /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text);
  if (!ok) throw new Usage(`${name}: '${text}' is not ${spec.type === 'int' ? 'an integer' : 'a finite number'}`);
  const v = Number(text);
  if (('min' in spec && v < spec.min) || ('min_exclusive' in spec && v <= spec.min_exclusive) || ('max' in spec && v > spec.max))
    throw new Usage(`${name}: '${text}' is out of range`);
  return v;
}

function runtime() {
  return { name: 'nodejs', version: process.version, schedulers: 1 };
}

function parse(argv) {
  const L = CLI.languages[LANG];
  if (argv.length === 0) throw new Usage('missing sub-command (echo_flood, --version, --help)');
  if (argv[0] === '--version') {
    if (argv.length > 1) throw new Usage(`--version takes no argument, got '${argv[1]}'`);
    console.log(JSON.stringify({ program: 'serverbench', program_version: '0.1.0', language: LANG, runtime: runtime() }));
    return null;
  }
  if (argv[0] === '--help' || argv[0] === '-h') {
    console.log(`usage: node serverbench.js echo_flood server [--port P] [--idle-timeout-s T]\nbenchmarks: ${L.benchmarks.join(', ')}`);
    return null;
  }
  const bench = argv[0];
  if (!(bench in CLI.benchmarks)) throw new Usage(`unknown sub-command '${bench}'`);
  if (!L.benchmarks.includes(bench)) throw new Usage(`language ${LANG} does not implement the benchmark ${bench}`);
  const roles = CLI.benchmarks[bench].roles;
  if (argv.length < 2) throw new Usage(`${bench} needs a role: ${Object.keys(roles).join(' or ')}`);
  const role = argv[1];
  if (!(role in roles)) throw new Usage(`${bench}: unknown role '${role}'`);
  if (!((L.roles || {})[bench] || Object.keys(roles)).includes(role))
    throw new Usage(`language ${LANG} does not implement the ${role} role of ${bench}`);
  const flags = roles[role].flags;
  const given = {};
  const args = argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    const name = eq >= 0 ? a.slice(0, eq) : a;
    if (!(name in flags)) throw new Usage(`unknown flag or argument '${a}' for ${bench} ${role}`);
    if (name in given) throw new Usage(`${name} given twice`);
    let text;
    if (eq >= 0) text = a.slice(eq + 1);
    else if (i + 1 < args.length && !args[i + 1].startsWith('--')) text = args[++i];
    else throw new Usage(`${name}: missing value`);
    given[name] = value(name, flags[name], text);
  }
  const params = {};
  let variant = 'fair';
  for (const [name, spec] of Object.entries(flags)) {
    const v = name in given ? given[name] : spec.default;
    if (v === undefined && spec.required) throw new Usage(`${name} is required for ${bench} ${role}`);
    if (spec.param === null) {
      variant = v;
      if (!(L.variants || CLI.implemented_variants).includes(variant)) throw new Usage(`--variant: '${variant}' is not built for ${LANG} ${bench}`);
    } else if (v !== undefined) params[spec.param] = v;
  }
  return { role, params, variant };
}

function serve(params, variant) {
  const t0 = process.hrtime.bigint();
  const c = { accepted: 0, bytesRead: 0, bytesWritten: 0, errors: 0, open: 0, idleSince: Date.now() };
  const sockets = new Set();
  let stopped = false;
  const server = net.createServer((sock) => {
    c.accepted++;
    c.open++;
    sockets.add(sock);
    sock.setNoDelay(true);
    sock.on('data', (data) => {
      c.bytesRead += data.length;
      sock.write(data);
      c.bytesWritten += data.length;
    });
    sock.on('error', () => { c.errors++; });
    sock.on('close', () => {
      sockets.delete(sock);
      c.open--;
      if (c.open === 0) c.idleSince = Date.now();
    });
  });
  const stop = (reason) => {
    if (stopped) return;
    stopped = true;
    server.close();
    for (const s of sockets) s.destroy();
    const port = server.address() ? server.address().port : 0;
    const rec = {
      benchmark: BENCH, role: 'server', language: LANG, variant,
      params: { port: params.port, idle_timeout_s: params.idle_timeout_s },
      metrics: {
        elapsed_s: Number(process.hrtime.bigint() - t0) / 1e9, port: listenPort, connections_accepted: c.accepted,
        bytes_read: c.bytesRead, bytes_written: c.bytesWritten, connection_errors: c.errors, stop_reason: reason,
      },
      validation: { ok: true, reason: null }, runtime: runtime(),
    };
    void port;
    process.stdout.write(JSON.stringify(rec) + '\n', () => process.exit(0));
  };
  let listenPort = 0;
  server.on('error', (e) => {
    process.stderr.write(`error: cannot listen on ${CLI.sockets.host}:${params.port}: ${e.message}\n`);
    process.exit(1);
  });
  server.listen({ host: CLI.sockets.host, port: params.port, backlog: BACKLOG }, () => {
    listenPort = server.address().port;
    process.stdout.write(JSON.stringify({ event: 'listening', benchmark: BENCH, role: 'server', language: LANG, address: CLI.sockets.host, port: listenPort }) + '\n');
    let buf = '';
    process.stdin.on('data', (d) => {
      buf += d.toString();
      if (buf.split('\n').some((l, i, all) => i < all.length - 1 && l.trim() === 'stop')) stop('stop_line');
      if (buf.length > 4096) buf = buf.slice(-256);
    });
    process.stdin.on('end', () => stop('stdin_eof'));
    process.stdin.on('error', () => {});
    process.on('SIGTERM', () => stop('signal'));
    const idle = params.idle_timeout_s * 1000;
    setInterval(() => { if (c.open === 0 && Date.now() - c.idleSince >= idle) stop('idle_timeout'); }, 200);
  });
}

try {
  const parsed = parse(process.argv.slice(2));
  if (parsed !== null) serve(parsed.params, parsed.variant);
} catch (e) {
  if (!(e instanceof Usage)) throw e;
  process.stderr.write(`error: ${e.message}\n`);
  process.exit(2);
}
