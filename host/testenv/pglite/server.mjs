// Serves one PGlite instance (PostgreSQL 18 in WebAssembly, with pgvector) over the
// PostgreSQL wire protocol for host/testenv, which starts one such process per
// instance as `node server.mjs` in this directory. Not meant to be run by hand.
//
// Why not pglite-socket's own dist/scripts/server.js: PGlite is a single backend, so
// every connection to a server shares one session (search_path, temp tables,
// prepared statements, the open transaction) and the database name in the URL is
// ignored; tests cannot be isolated on one instance by database or by schema. So
// testenv leases whole instances, one per test, and reuses an instance only after
// this script has wiped it. One process per instance, because a PGlite that lost
// protocol synchronisation (COPY FROM STDIN does that) can spin forever on node's
// only thread: testenv then kills the process, and no other test's instance stalls.
//
// Protocol, one line each:
//   stdout {"port":P}        an empty instance listens on 127.0.0.1:P (at start, after each wipe)
//   stdin  wipe              disconnect every client, wipe, listen on a new port, then {"port":P}
//   stdout {"error":"..."}   and exit 1: the instance is not usable
// The process exits when stdin closes or its parent dies, so an instance never
// outlives the test binary that started it, even one that crashed or was killed.

import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'
import { PGLiteSocketServer } from '@electric-sql/pglite-socket'

// Connections are cheap (they all queue on the one backend), but the socket server
// answers one over its limit with plain text that clients report as a protocol error.
const maxConnections = 16

function send(obj) {
  // Synchronous for pipes on Linux, so it is written even if we exit right after.
  process.stdout.write(JSON.stringify(obj) + '\n')
}

function fail(what, err) {
  send({ error: `${what}: ${err?.stack || err}` })
  process.exit(1)
}

// The parent holds our stdin open; it closes when the parent exits in any way.
// Nothing is on disk (memory://), so there is nothing to flush.
const lines = createInterface({ input: process.stdin })
lines.on('close', () => process.exit(0))
// Belt and braces for a stdin pipe that leaked to another process: being
// re-parented means the test binary is gone.
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) process.exit(0)
}, 1000).unref()

// A new PGlite runs initdb (4-10 s on a busy 2-core machine); one loaded from a dump
// of a new one's data directory starts in 1.5-2.5 s. The dump is kept in
// node_modules/.cache for later instances and runs, named by the PGlite version.
const pgliteVersion = JSON.parse(
  await readFile(new URL('./node_modules/@electric-sql/pglite/package.json', import.meta.url), 'utf8'),
).version
const cacheDir = new URL('./node_modules/.cache/agenthost-testenv/', import.meta.url)
const cacheFile = new URL(`pgdata-${pgliteVersion}.tar`, cacheDir)

async function open(dataDir) {
  const db = new PGlite('memory://', { extensions: { vector }, loadDataDir: dataDir })
  await db.waitReady
  return db
}

async function newInstance() {
  try {
    return await open(new Blob([await readFile(cacheFile)]))
  } catch {
    // No cache yet, or one that does not load: make the data directory afresh.
  }
  const db = await open(undefined)
  const tmp = new URL(`pgdata-${pgliteVersion}.${process.pid}.tmp`, cacheDir)
  try {
    const dump = await db.dumpDataDir('none')
    await mkdir(cacheDir, { recursive: true })
    // Write then rename: processes starting together never read half a file.
    await writeFile(tmp, new Uint8Array(await dump.arrayBuffer()))
    await rename(tmp, cacheFile)
  } catch (err) {
    console.error(`testenv pglite: caching the data directory (only an optimisation): ${err}`)
    await rm(tmp, { force: true }).catch(() => {})
  }
  return db
}

// fatal tells whether a chunk of backend output holds an ErrorResponse of severity
// FATAL: the backend then wants to end the session, which PGlite cannot, and the
// instance is not to be trusted again.
function fatal(data) {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  for (let i = 0; i + 5 <= b.length; ) {
    const type = b[i]
    const len = b.readInt32BE(i + 1)
    if (len < 4) return false // not framed as we thought; do not guess
    if (type === 0x45 /* E */) {
      const body = b.subarray(i + 5, Math.min(b.length, i + 1 + len))
      for (let j = 0; j < body.length && body[j] !== 0; ) {
        const end = body.indexOf(0, j + 1)
        if (end < 0) break
        if (body[j] === 0x56 /* V: severity, never localised */ && body.toString('latin1', j + 1, end) === 'FATAL') return true
        j = end + 1
      }
    }
    i += 1 + len
  }
  return false
}

let broken = false
const db = await newInstance().catch((err) => fail('creating a PGlite instance', err))
const execRaw = db.execProtocolRawStream.bind(db)
db.execProtocolRawStream = (message, options = {}) =>
  execRaw(message, {
    ...options,
    onRawData: (data) => {
      if (!broken && fatal(data)) broken = true
      options.onRawData?.(data)
    },
  })

async function listen() {
  // Port 0: the kernel picks a free port, so there is no race with other servers.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections })
  await server.start()
  send({ port: Number(server.getServerConn().split(':').pop()) })
  return server
}

// wipe returns the instance to the state of a new one as far as tests can tell:
// no schema but an empty public, no extension but plpgsql, no role but postgres,
// no leftover session state.
async function wipe() {
  if (broken) throw new Error('the backend reported a FATAL error (COPY FROM STDIN is not supported), so the instance is not reused')
  // A client that went away in the middle of COPY FROM STDIN or of an extended-protocol
  // exchange leaves the backend expecting more: CopyFail ends a COPY (outside one it is
  // ignored), Sync ends the exchange.
  const copyFail = new Uint8Array([0x66, 0, 0, 0, 5, 0])
  const sync = new Uint8Array([0x53, 0, 0, 0, 4])
  await db.execProtocolRaw(copyFail)
  await db.execProtocolRaw(sync)
  if (db.isInTransaction()) await db.exec('ROLLBACK')
  // DISCARD ALL refuses to run in a transaction, which a multi-statement exec is.
  await db.exec('DISCARD ALL')
  await db.exec(`
    DO $$
    DECLARE s name;
    BEGIN
      FOR s IN SELECT nspname FROM pg_namespace
               WHERE nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
                 AND nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%'
      LOOP
        EXECUTE format('DROP SCHEMA %I CASCADE', s);
      END LOOP;
    END $$;
    CREATE SCHEMA public AUTHORIZATION pg_database_owner;
    GRANT USAGE ON SCHEMA public TO PUBLIC;
    SELECT lo_unlink(oid) FROM pg_largeobject_metadata;
  `)
  // CREATE DATABASE works on PGlite although no one can connect to the result;
  // DROP DATABASE and DROP ROLE cannot run inside the DO block above.
  const dbs = await db.query(
    `SELECT datname FROM pg_database WHERE datname NOT IN ('postgres', 'template0', 'template1')`,
  )
  for (const { datname } of dbs.rows) await db.exec(`DROP DATABASE "${datname.replaceAll('"', '""')}"`)
  const roles = await db.query(`SELECT rolname FROM pg_roles WHERE rolname !~ '^pg_' AND rolname <> current_user`)
  for (const { rolname } of roles.rows) await db.exec(`DROP ROLE "${rolname.replaceAll('"', '""')}"`)
}

let server = await listen().catch((err) => fail('starting the socket server', err))

lines.on('line', async (line) => {
  if (line.trim() !== 'wipe') {
    console.error(`testenv pglite: unknown request ${JSON.stringify(line)}`)
    return
  }
  try {
    // Stopping the socket server disconnects every client of the finished test, and
    // the next test gets a new port, so nothing the last one left can reach it.
    await server.stop()
    await wipe()
    server = await listen()
  } catch (err) {
    fail('wiping the instance', err)
  }
})
