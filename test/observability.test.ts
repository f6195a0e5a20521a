/**
 * What monitoring reads, without a key: /readyz (200 only while the read
 * model is ready, caught up and within READY_MAX_LAG_MS of the log; 503 with
 * the lag otherwise) and /metrics in Prometheus's text format (requests by
 * route pattern and status, latency, projection position and lag, events
 * applied, records per kind, default process metrics).
 */
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { type DomainEvent, streamOf } from '../src/events/catalog.js';
import { EVENT_LOOP_SAMPLE_MS } from '../src/http/metrics.js';
import { DEMO_KEY, startApp } from './helpers.js';

const RIVERSIDE = 'bf802b36-047d-4718-ad5b-ae9ed495b23f';

t.test('/readyz: 200 while caught up; 503 with the lag once further behind than the bound', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'], readyMaxLagMs: 50 });
  t.teardown(() => app.close());
  const ready = await app.get('/readyz', null);
  t.equal(ready.status, 200);
  t.same(ready.body, { status: 'ready', lag: { positions: '0', ms: 0 }, max_lag_ms: 50 });

  await app.runtime.projector.stop();
  const event: DomainEvent = { type: 'CategoryCreated', data: { institution_id: RIVERSIDE, occurred_at: '2026-10-01T10:00:00Z', category_id: randomUUID(), title: 'Late', description: '' } };
  await app.runtime.store.append(streamOf(event), [{ id: randomUUID(), type: event.type, data: event.data }]);
  await new Promise((resolve) => setTimeout(resolve, 1200)); // the head is asked for at most once a second
  await app.get('/readyz', null); // notices the head
  await new Promise((resolve) => setTimeout(resolve, 80));
  const behind = await app.get('/readyz', null);
  t.equal(behind.status, 503);
  t.equal(behind.body.status, 'not_ready');
  t.equal(behind.body.lag.positions, '1');
  t.ok(behind.body.lag.ms > 50, `lag ${behind.body.lag.ms} ms`);
});

t.test('/metrics: Prometheus text with requests, latency, projection and records', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  await app.get('/api/shifts/?limit=1');
  await app.get('/api/shifts/?limit=2');
  await app.get('/api/shifts/00000000-0000-4000-8000-000000000000/');
  await app.get('/api/shifts/', 'wrong key');
  const res = await app.server.inject({ method: 'GET', url: '/metrics' });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const text = res.body;
  t.match(text, /http_requests_total\{route="\/api\/shifts\/",status="200"\} 2\n/);
  t.match(text, /http_requests_total\{route="\/api\/shifts\/:id\/",status="404"\} 1\n/);
  t.match(text, /http_requests_total\{route="\/api\/shifts\/",status="401"\} 1\n/);
  t.match(text, /http_request_duration_seconds_bucket\{le="0\.0005",route="\/api\/shifts\/",status="200"\} \d+\n/);
  t.match(text, /projection_position 475\n/);
  t.match(text, /projection_events_applied 475\n/);
  t.match(text, /projection_lag_positions 0\n/);
  t.match(text, /read_model_records\{kind="shift"\} \d+\n/);
  t.match(text, /read_model_fragment_cache_bytes [1-9]\d*\n/, 'the JSON cache holds the pages asked for');
  t.match(text, /read_model_rank_matrix_bytes \d+\n/);
  t.match(text, /read_model_rank_matrices_let_go_total \d+\n/);
  t.match(text, /http_rate_limited_total 0\n/);
  t.match(text, /log_lines_dropped_total 0\n/);
  t.match(text, /process_cpu_user_seconds_total \d/);
  t.notMatch(text, DEMO_KEY, 'no key in the metrics');
});

t.test('/metrics: the event loop figures include the monitor\'s sampling interval, as the README says', async (t) => {
  const app = await startApp({ fixtures: ['demo.ndjson'] });
  t.teardown(() => app.close());
  const lag = async (which: string) => {
    const text = (await app.server.inject({ method: 'GET', url: '/metrics' })).body;
    return Number(new RegExp(`^nodejs_eventloop_lag_${which}_seconds (\\S+)$`, 'm').exec(text)?.[1]);
  };
  await lag('min'); // (reading the metrics resets the monitor: what follows is the idle time below)
  await new Promise((resolve) => setTimeout(resolve, 300));
  const idle = await lag('min');
  // An idle loop is sampled every EVENT_LOOP_SAMPLE_MS: the least interval measured is about that, never near 0.
  t.ok(idle >= (0.8 * EVENT_LOOP_SAMPLE_MS) / 1000, `least interval ${idle} s`);
  t.ok(idle < 0.1, `least interval ${idle} s`);
});
