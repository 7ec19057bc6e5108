// Node.js with worker threads, the libuv thread pool (crypto, zlib): V8 and libuv
// take pthread rwlocks, trylocks and condition variables. Output is deterministic.
const { Worker, isMainThread, parentPort, workerData } = require('worker_threads');
const crypto = require('crypto');
const zlib = require('zlib');
if (isMainThread) {
  let pending = 0, results = [];
  const done = () => { if (--pending === 0) { results.sort(); console.log(results.join('\n')); } };
  for (let w = 0; w < 4; w++) {
    pending++;
    const worker = new Worker(__filename, { workerData: w });
    worker.on('message', m => { results.push(m); done(); });
  }
  for (let i = 0; i < 64; i++) {
    pending++;
    crypto.pbkdf2('pw' + i, 'salt', 2000, 32, 'sha256', (e, k) => { results.push('p' + String(i).padStart(3, '0') + ' ' + k.toString('hex')); done(); });
  }
  for (let i = 0; i < 64; i++) {
    pending++;
    zlib.deflate(Buffer.alloc(100000, i), (e, b) => { results.push('z' + String(i).padStart(3, '0') + ' ' + b.length); done(); });
  }
} else {
  let h = crypto.createHash('sha256'); const objs = [];
  for (let i = 0; i < 200000; i++) { objs.push({ a: i, b: 'x' + i }); if (objs.length > 1000) objs.length = 0; h.update(String(i)); }
  parentPort.postMessage('w' + workerData + ' ' + h.digest('hex'));
}
