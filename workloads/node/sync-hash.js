// sync-hash - a Node.js HTTP server whose one route hashes synchronously on the
// event loop, under a keep-alive HTTP load from a second Node process.
//
// Problem: the server (this file re-run with --serve, process title
// "sh-server", started with --perf-basic-prof --interpreted-frames-native-stack
// so that its JavaScript frames are named in /tmp/perf-PID.map) answers
// GET /hash in slowHandler, which derives a key with crypto.pbkdf2Sync
// (--iterations, default 20000, SHA-256): the event loop runs every hash
// itself, so requests queue behind each other whatever the number of cores.
// The load client (a third process, title "sh-client", started once the server
// listens, so that none of its waits is the server's start) keeps --clients
// (default 8) requests in flight over keep-alive connections; the launcher
// ("sh-main") prints its throughput.
//
// Expected diagnosis: the client waits on its sockets for the server's main
// thread "sh-server", running the whole time in slowHandler (pbkdf2Sync, the
// hash in OpenSSL's PKCS5_PBKDF2_HMAC underneath).
//
// --fixed: the asynchronous crypto.pbkdf2: the hashes run on libuv's thread
// pool, beside the event loop.
'use strict';

const crypto = require('crypto');
const http = require('http');
const { spawn } = require('child_process');

const USAGE = `usage: sync-hash.js [--seconds N] [--fixed] [--clients N] [--iterations N]
A Node.js HTTP server hashes each request with pbkdf2Sync on its event loop under
an HTTP load (--fixed: the asynchronous pbkdf2, on libuv's thread pool).
  --seconds N     run time, fractions allowed (default 5)
  --fixed         hash with the asynchronous crypto.pbkdf2
  --clients N     requests in flight (default 8)
  --iterations N  PBKDF2 iterations per request (default 20000)
`;

function usageError(msg) {
  process.stderr.write(`sync-hash: ${msg}\n${USAGE}`);
  process.exit(2);
}

function parse(argv) {
  const o = { seconds: 5, fixed: false, clients: 8, iterations: 20000, serve: false, port: 0 };
  const num = (flag, v, min) => {
    const n = Number(v);
    if (v === undefined || !Number.isFinite(n) || n < min) {
      usageError(`${flag} needs a number >= ${min}`);
    }
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    switch (a) {
      case '--help':
        process.stdout.write(USAGE);
        process.exit(0);
        break;
      case '--seconds': o.seconds = num(a, argv[++i], 0); break;
      case '--fixed': o.fixed = true; break;
      case '--clients': o.clients = Math.floor(num(a, argv[++i], 1)); break;
      case '--iterations': o.iterations = Math.floor(num(a, argv[++i], 1)); break;
      case '--serve': o.serve = true; break; // internal: run as the server
      case '--load': o.port = Math.floor(num(a, argv[++i], 1)); break; // internal: the client
      default: usageError(`unknown flag ${a}`);
    }
  }
  return o;
}

const SALT = Buffer.from('causeway-sync-hash');

// The route's handler: the program's own code the diagnosis should name.
function slowHandler(req, res, o) {
  const password = req.url;
  if (o.fixed) {
    crypto.pbkdf2(password, SALT, o.iterations, 32, 'sha256', (err, key) => {
      res.end(err ? 'error' : key.toString('hex'));
    });
    return;
  }
  const key = crypto.pbkdf2Sync(password, SALT, o.iterations, 32, 'sha256');
  res.end(key.toString('hex'));
}

function serve(o) {
  process.title = 'sh-server';
  const server = http.createServer((req, res) => {
    if (req.url.startsWith('/hash')) {
      slowHandler(req, res, o);
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  server.keepAliveTimeout = 60000;
  server.listen(0, '127.0.0.1', () => {
    // The port for the client, on the pipe the client reads.
    process.stdout.write(`port ${server.address().port}\n`);
  });
  process.on('SIGTERM', () => process.exit(0));
}

function startServer(o) {
  const args = [
    '--perf-basic-prof',
    '--interpreted-frames-native-stack',
    // V8 writes a log beside the perf map; nobody reads it.
    '--no-logfile-per-isolate',
    '--logfile=/dev/null',
    __filename,
    '--serve',
  ];
  if (o.fixed) args.push('--fixed');
  args.push('--iterations', String(o.iterations));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const m = /port (\d+)\n/.exec(buf);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code})`)));
  });
}

// The load client: --clients requests in flight for --seconds against the port;
// prints the requests done and the seconds on stdout for the launcher.
function load(o) {
  process.title = 'sh-client';
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.clients });
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(o.seconds * 1e9));
  let done = 0;
  let active = 0;
  const one = () => {
    if (process.hrtime.bigint() >= end) {
      if (--active === 0) {
        const secs = Number(process.hrtime.bigint() - start) / 1e9;
        agent.destroy();
        process.stdout.write(`done ${done} ${secs}\n`);
      }
      return;
    }
    const req = http.get({ host: '127.0.0.1', port: o.port, path: `/hash/${done}`, agent }, (res) => {
      res.resume();
      res.on('end', () => {
        done++;
        one();
      });
    });
    req.on('error', (e) => {
      process.stderr.write(`sync-hash: request failed: ${e.message}\n`);
      process.exit(1);
    });
  };
  for (let i = 0; i < o.clients; i++) {
    active++;
    one();
  }
}

// The launcher: the server, then the client once the server listens.
async function main(o) {
  process.title = 'sh-main';
  const { child, port } = await startServer(o);
  const args = [__filename, '--load', String(port), '--seconds', String(o.seconds),
    '--clients', String(o.clients)];
  const client = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  client.stdout.on('data', (d) => { out += d; });
  client.on('exit', (code) => {
    child.removeAllListeners('exit');
    const m = /done (\d+) ([\d.e+-]+)/.exec(out);
    if (code !== 0 || !m) {
      process.stderr.write(`sync-hash: the client failed (${code})\n`);
      child.kill('SIGTERM');
      process.exit(1);
    }
    child.on('exit', () => {
      process.stdout.write(`throughput: ${(Number(m[1]) / Number(m[2])).toFixed(1)} ops/s\n`);
    });
    child.kill('SIGTERM');
  });
}

const opts = parse(process.argv.slice(2));
if (opts.serve) {
  serve(opts);
} else if (opts.port) {
  load(opts);
} else {
  main(opts).catch((e) => {
    process.stderr.write(`sync-hash: ${e.message}\n`);
    process.exit(1);
  });
}
