// Test-only generator: writes fixtures/capture-parquet-*/ from the JSON exports
// of fixtures/capture-rmsnorm-naive/ and fixtures/capture-sysprofile/, as the
// Parquet tables of Neuron Explorer's profile schema 7.4.0
// (aws-neuron-sdk tools/neuron-explorer/profile-schema-reference.rst), with
// parquet-wasm (the Rust `parquet` crate built for WebAssembly) as the
// independent writer. neuron-stats never runs this: the .parquet files it
// writes are committed, and `meson test` needs no npm.
//
//   cd tools/parquet-fixtures && npm ci && node gen_parquet.mjs
//
// The output is deterministic (same input, same pinned writer, same bytes).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as arrow from 'apache-arrow';
import * as pq from 'parquet-wasm/node';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const fixtures = path.join(repo, 'fixtures');
const RANK = 'i-0a1b2c3d4e5f60718_pid_41700/1767225600912346678';

// Writer settings rotated over the tables, so each capture exercises every
// codec, both data page versions and dictionary on and off.
const variants = [
  { codec: pq.Compression.SNAPPY, version: pq.WriterVersion.V1, dict: true },
  { codec: pq.Compression.ZSTD, version: pq.WriterVersion.V2, dict: true },
  { codec: pq.Compression.UNCOMPRESSED, version: pq.WriterVersion.V1, dict: false },
  { codec: pq.Compression.ZSTD, version: pq.WriterVersion.V1, dict: false },
  { codec: pq.Compression.SNAPPY, version: pq.WriterVersion.V2, dict: false },
  { codec: pq.Compression.UNCOMPRESSED, version: pq.WriterVersion.V2, dict: true },
];
let nextVariant = 0;

// Integers beyond 2^53 (epoch ns) would lose digits as JavaScript numbers:
// they are read as marked strings, become BigInt in int64 columns, and are
// written back as numbers inside extra_attributes_json.
const BIG = '#big#';
function readJson(file) {
  const text = fs.readFileSync(file, 'utf8').replace(/([:\[,]\s*)(-?\d{16,})(?=\s*[,\]}])/g, `$1"${BIG}$2"`);
  return JSON.parse(text);
}
const num = (v) => (typeof v === 'string' && v.startsWith(BIG) ? BigInt(v.slice(BIG.length)) : v);
const big = (v) => (v === null || v === undefined ? v : BigInt(num(v)));
const stringify = (o) => JSON.stringify(o).replace(/"#big#(-?\d+)"/g, '$1');

const I64 = 'i64', I32 = 'i32', F64 = 'f64', STR = 'str', BOOL = 'bool', STRLIST = 'strlist', STRUCT = 'struct';

function vector(type, values) {
  switch (type) {
    case I64: return arrow.vectorFromArray(values.map((v) => (v === null || v === undefined ? null : big(v))), new arrow.Int64());
    case I32: return arrow.vectorFromArray(values.map((v) => (v === undefined ? null : v)), new arrow.Int32());
    case F64: return arrow.vectorFromArray(values.map((v) => (v === undefined ? null : v)), new arrow.Float64());
    case BOOL: return arrow.vectorFromArray(values.map((v) => (v === undefined ? null : v)), new arrow.Bool());
    case STR: return arrow.vectorFromArray(values.map((v) => (v === null || v === undefined ? null : String(num(v)))), new arrow.Utf8());
    case STRLIST:
      return arrow.vectorFromArray(values.map((v) => (v === null || v === undefined ? null : v.map(String))),
        new arrow.List(new arrow.Field('element', new arrow.Utf8(), true)));
    case STRUCT:
      return arrow.vectorFromArray(values, new arrow.Struct([new arrow.Field('x', new arrow.Int64(), true)]));
    default: throw new Error(`type ${type}`);
  }
}

// columns: [[name, type], ...]; rows: objects keyed by column name.
function writeTable(dir, table, columns, rows, variant) {
  const v = variant ?? variants[nextVariant++ % variants.length];
  const data = {};
  for (const [name, type] of columns) data[name] = vector(type, rows.map((r) => r[name]));
  const t = new arrow.Table(data);
  const props = new pq.WriterPropertiesBuilder()
    .setCompression(v.codec)
    .setWriterVersion(v.version)
    .setDictionaryEnabled(v.dict)
    .setCreatedBy('parquet-wasm 0.8.0 (tools/parquet-fixtures/gen_parquet.mjs)')
    .build();
  const bytes = pq.writeParquet(pq.Table.fromIPCStream(arrow.tableToIPC(t, 'stream')), props);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${table}.parquet`), bytes);
}

// Instruction.engine: the engine names of the schema ("tensor", ...) for the
// UI track labels the legacy JSON writes.
const trackEngine = { TensorMatrix: 'tensor', Activation: 'scalar', Vector: 'vector', Pool: 'gpsimd', Sync: 'sync' };

function deviceProfile(src, dir) {
  const d = readJson(src);
  const pcOnEngine = {};
  writeTable(dir, 'Instruction', [
    ['start_ts', I64], ['end_ts', I64], ['duration_ns', I64], ['engine', STR], ['timeline_track', STR],
    ['opcode', STR], ['operands', STR], ['id', I64], ['pc', I64], ['bir_id', STR], ['hlo_name', STR], ['layer', STR],
  ], d.instruction.map((e, i) => {
    const engine = trackEngine[e.label] ?? e.label;
    pcOnEngine[engine] = (pcOnEngine[engine] ?? -1) + 1;
    return {
      start_ts: e.timestamp, end_ts: e.timestamp + e.duration, duration_ns: e.duration, engine,
      timeline_track: e.label, opcode: e.opcode, operands: e.operands, id: i, pc: pcOnEngine[engine],
      bir_id: `sg0000:${i}`, hlo_name: e.hlo_name, layer: e.layer,
    };
  }));
  writeTable(dir, 'DmaPacket', [
    ['start_ts', I64], ['end_ts', I64], ['duration_ns', I64], ['id', I64], ['packet_idx', I32],
    ['packet_aggregation_id', I64], ['read_bytes', I64], ['write_bytes', I64], ['transfer_bytes', I64],
    ['throughput', F64], ['queue_type', STR], ['variable', STR], ['queue_name', STR],
  ], d.dma.map((e, i) => ({
    start_ts: e.timestamp, end_ts: e.timestamp + e.duration, duration_ns: e.duration, id: i, packet_idx: 0,
    packet_aggregation_id: i, read_bytes: e.read_size, write_bytes: e.transfer_size,
    transfer_bytes: e.transfer_size, throughput: e.duration > 0 ? (e.transfer_size * 1e9) / e.duration : 0,
    queue_type: e.queue_type, variable: e.variable, queue_name: e.dma_queue,
  })));
  writeTable(dir, 'ActiveTime', [
    ['start_ts', I64], ['end_ts', I64], ['engine', STR], ['pcore_idx', I64], ['duration_ns', I64],
  ], d.active_time.map((e) => ({ ...e, pcore_idx: 0, duration_ns: e.end_ts - e.start_ts })));
  // Summary and Metadata: the JSON's one object; integers as int64, the rest double.
  for (const [table, obj, extra] of [['Summary', d.summary[0], {}], ['Metadata', d.metadata[0], { profile_schema_version: '7.4.0' }]]) {
    const row = { ...obj, ...extra };
    const cols = Object.keys(row).map((k) => [k,
      typeof row[k] === 'string' ? STR : typeof row[k] === 'boolean' ? BOOL
        : Number.isInteger(row[k]) && !/_time$|_percent$/.test(k) ? I64 : F64]);
    writeTable(dir, table, cols, [row]);
  }
  // ExecutionInfo: one row per execution (the JSON's layer_summary spans), the NEFF by file name.
  const neff = d.profile_info[0].neff_name;
  writeTable(dir, 'ExecutionInfo', [
    ['execution_index', I32], ['neff_name', STR], ['execution_start_ts', I64], ['execution_end_ts', I64],
    ['num_subgraphs', I32], ['row_count', I64],
  ], d.layer_summary.map((l, i) => ({
    execution_index: i, neff_name: neff, execution_start_ts: l.start, execution_end_ts: l.end,
    num_subgraphs: null, row_count: null,
  })));
  if (d.warnings.length)
    writeTable(dir, 'Warning', [['message', STR], ['category', STR]], d.warnings);
  // ThrottleSummary: the pair's summary-json per-core throttle time
  // (throttle_active_nc<N>_time_ns) as the row of throttle_type "all" of core N.
  const sumFile = src.replace(/\.json$/, '.summary.json');
  if (fs.existsSync(sumFile)) {
    const node = Object.values(readJson(sumFile))[0];
    const rows = Object.entries(node).filter(([k]) => /^throttle_active_nc\d+_time_ns$/.test(k))
      .map(([k, v]) => ({ nc_idx: Number(k.match(/\d+/)[0]), throttle_type: 'all', throttle_active_time_ns: v }));
    if (rows.length)
      writeTable(dir, 'ThrottleSummary', [['nc_idx', I32], ['throttle_type', STR], ['throttle_active_time_ns', I64],
        ['throttle_active_time_percent', F64], ['max_achievable_util_with_throttling_percent', F64]], rows);
  }
}

// SystemProfileEvents: the documented columns from the event's keys, every
// other key in extra_attributes_json (as the schema describes it); start and
// stop halves stay separate rows (their phase is an extra attribute).
const columnKeys = new Set(['name', 'timestamp', 'duration', 'type', 'group', 'instance_id', 'process_id',
  'thread_id', 'nc_idx', 'flow_id']);

function source(e) {
  if (e.type === 99999 || String(e.group ?? '').startsWith('framework')) return 'framework';
  if (['nc_exec_running', 'cc_running', 'timestamp_sync_point', 'hw_notify'].includes(e.name)) return 'neuron_hw';
  return 'neuron_rt';
}

function systemProfile(src, dir) {
  const s = readJson(src);
  writeTable(dir, 'SystemProfileMetadata', [
    ['first_ts', STR], ['last_ts', STR], ['first_ts_ns', STR], ['last_ts_ns', STR], ['ntff_version', I64],
    ['hbm_capacity_bytes', I64],
  ], s.system_profile_metadata);
  writeTable(dir, 'DeviceProfileList', [
    ['device_profile_name', STR], ['instance_id', STR], ['process_id', I64], ['nc_id', I64], ['session_id', I64],
    ['model_id', I64],
  ], s.device_profile_list);
  const rows = s.trace_event.map((e, i) => {
    const extra = {};
    for (const [k, v] of Object.entries(e)) if (!columnKeys.has(k)) extra[k] = v;
    return {
      id: i, name: e.name, start_ts: big(e.timestamp), end_ts: big(e.timestamp) + BigInt(e.duration ?? 0),
      duration_ns: e.duration ?? 0, trace_event_source: source(e), instance_id: e.instance_id,
      process_id: e.process_id === undefined ? null : Number(e.process_id),
      thread_id: e.thread_id ?? null, nc_idx: e.nc_idx === undefined ? null : Number(e.nc_idx),
      pcore_idx: null, worker_gid: null, flow_id: e.flow_id ?? null, framework_stream_id: null,
      extra_attributes_json: Object.keys(extra).length ? stringify(extra) : null,
    };
  });
  writeTable(dir, 'SystemProfileEvents', [
    ['id', I64], ['name', STR], ['start_ts', I64], ['end_ts', I64], ['duration_ns', I64],
    ['trace_event_source', STR], ['instance_id', STR], ['process_id', I64], ['thread_id', I64], ['nc_idx', I64],
    ['pcore_idx', I64], ['worker_gid', I64], ['flow_id', STRLIST], ['framework_stream_id', STR],
    ['extra_attributes_json', STR],
  ], rows);
}

// A capture folder whose exports are Parquet: the trace, NEFFs and raw files
// are symbolic links to the JSON capture's, each JSON export is a folder of
// tables named after it (what `--output-file DIR` writes).
function convertCapture(from, to) {
  const srcDir = path.join(fixtures, from, RANK);
  const dstDir = path.join(fixtures, to, RANK);
  fs.rmSync(path.join(fixtures, to), { recursive: true, force: true });
  fs.mkdirSync(dstDir, { recursive: true });
  fs.symlinkSync(path.join('..', from, 'truth.json'), path.join(fixtures, to, 'truth.json'));
  nextVariant = 0;
  for (const name of fs.readdirSync(srcDir).sort()) {
    const src = path.join(srcDir, name);
    if (name === 'system_profile.json') {
      systemProfile(src, path.join(dstDir, 'system_profile'));
    } else if (/__neff_\d+\.json$/.test(name)) {
      deviceProfile(src, path.join(dstDir, name.replace(/\.json$/, '')));
    } else if (!name.endsWith('.summary.json')) {
      fs.symlinkSync(path.relative(dstDir, src), path.join(dstDir, name));
    }
  }
}

convertCapture('capture-rmsnorm-naive', 'capture-parquet-naive');
convertCapture('capture-sysprofile', 'capture-parquet-sysprofile');

// A device profile whose tables are all GZIP-compressed (a codec
// neuron-stats refuses with exit 3).
fs.rmSync(path.join(fixtures, 'neuron-exports', 'parquet-gzip'), { recursive: true, force: true });

{
  const src = path.join(fixtures, 'capture-rmsnorm-naive', RANK, 'profile_nc_0_session_1__neff_2144605333080895986.json');
  const saved = variants.slice();
  variants.splice(0, variants.length, { codec: pq.Compression.GZIP, version: pq.WriterVersion.V1, dict: true });
  deviceProfile(src, path.join(fixtures, 'neuron-exports', 'parquet-gzip', 'profile_nc_0_session_1__neff_2144605333080895986'));
  variants.splice(0, variants.length, ...saved);
}

// Single tables for the reader's own tests: one per codec and page version,
// and the codecs neuron-stats refuses.
const single = path.join(fixtures, 'neuron-exports', 'parquet');
fs.rmSync(single, { recursive: true, force: true });
fs.mkdirSync(single, { recursive: true });
const small = [
  { a: 1, s: 'x', f: 0.5, b: true, l: ['1', '2'] }, { a: null, s: null, f: null, b: null, l: null },
  { a: -3, s: 'x', f: -2.25, b: false, l: [] }, { a: 9007199254740993, s: 'ünï "q"\n', f: 1e300, b: true, l: ['7'] },
];
const smallCols = [['a', I64], ['s', STR], ['f', F64], ['b', BOOL], ['l', STRLIST]];
for (const [name, codec] of [['uncompressed', 'UNCOMPRESSED'], ['snappy', 'SNAPPY'], ['zstd', 'ZSTD'], ['gzip', 'GZIP'],
  ['brotli', 'BROTLI'], ['lz4raw', 'LZ4_RAW']]) {
  for (const [ver, version] of [['v1', pq.WriterVersion.V1], ['v2', pq.WriterVersion.V2]]) {
    const dir = path.join(single, `${name}-${ver}`);
    writeTable(dir, 'Types', smallCols, small, { codec: pq.Compression[codec], version, dict: ver === 'v1' });
    fs.renameSync(path.join(dir, 'Types.parquet'), path.join(single, `types-${name}-${ver}.parquet`));
    fs.rmdirSync(dir);
  }
}

// A struct column (outside the flat subset: refused, exit 3) beside a plain one.
{
  const dir = path.join(single, 'struct');
  writeTable(dir, 'Types', [['a', I64], ['st', STRUCT]], [{ a: 1, st: { x: 2n } }, { a: 2, st: null }],
    { codec: pq.Compression.SNAPPY, version: pq.WriterVersion.V1, dict: true });
  fs.renameSync(path.join(dir, 'Types.parquet'), path.join(single, 'types-struct.parquet'));
  fs.rmdirSync(dir);
}
