// Node's own fetch (undici, built into Node) as a client of a gateway whose per-address
// connection cap is far below the requests it is sent at once: hundreds of POSTs from one
// address, each still sending its body when the gateway decides, small, large, streamed slowly
// and streamed fast. Every one must settle with 200, or with 503 and Retry-After: none may be
// reset (fetch rejects) or never settle (fetch pends until the client gives up). Only Node's
// built-ins: nothing to install.
//
//   node fetch_refusals_check.mjs PATH/TO/switchyard
//
// Prints one line per check and `N passed, N failed`; exits 1 when any check failed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SdkRun, checkLimitMs, pause } from './sdk_harness.mjs';

// Far below the requests sent at once, so nearly all of them are refused; and more refused at
// once than the 256 the gateway once answered before it began closing connections bare.
const perAddressCap = 4;
const clientsOfEachKind = 100;
// A request still unsettled this long after it was sent never will be: the gateway bounds a
// refused connection to 2 s, and an admitted one is answered in well under a second.
const settleLimitMs = checkLimitMs - 5_000;

const run = new SdkRun('fetch_refusals_check');
const check = (name, body) => run.check(name, body);

function writeConfig(directory) {
    const file = path.join(directory, 'switchyard.yaml');
    fs.writeFileSync(file, `listen: 127.0.0.1:8080
state:
  directory: ${path.join(directory, 'state')}
probes:
  enabled: false
limits:
  max_connections_per_address: ${perAddressCap}
providers:
  # A little latency, so that admitted requests hold their connections while the rest arrive.
  - id: simulated
    kind: simulated
    simulate: {latency: 200ms, first_token: 0ms, tokens_per_second: 1000, error_rate: 0, answer_tokens: 4}
    models: [sim-chat]
`);
    return file;
}

const chatJson = (content) => JSON.stringify({ model: 'sim-chat', messages: [{ role: 'user', content }] });

// `text` as a request body that arrives in `pieces` parts, `gapMs` apart.
function streamedBody(text, pieces, gapMs) {
    const bytes = new TextEncoder().encode(text);
    const pieceBytes = Math.ceil(bytes.length / pieces);
    let offset = 0;
    return new ReadableStream({
        async pull(controller) {
            if (offset >= bytes.length) {
                controller.close();
                return;
            }
            if (gapMs > 0)
                await pause(gapMs);
            controller.enqueue(bytes.slice(offset, offset + pieceBytes));
            offset += pieceBytes;
        },
    });
}

// Each kind of client: what its request body is, made afresh for every request.
const kinds = {
    small: () => ({ body: chatJson('hello') }),
    // Beyond the 64 KiB a refused connection reads before it answers: the 503 arrives while
    // fetch is still writing.
    large: () => ({ body: new TextEncoder().encode(chatJson('x'.repeat(200 * 1024))) }),
    // Longer than the second a refused connection waits for its request.
    slow: () => ({ body: streamedBody(chatJson('slowly'.repeat(200)), 15, 100), duplex: 'half' }),
    fastStream: () => ({ body: streamedBody(chatJson('y'.repeat(300 * 1024)), 20, 0), duplex: 'half' }),
};

// What became of one request: its status and Retry-After, why fetch rejected, or that it had not
// settled within the limit.
async function send(port, kind) {
    const request = fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        ...kinds[kind](),
    }).then(async (response) => ({
        kind,
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: await response.text(),
    }), (error) => ({ kind, rejected: `${error.message} (${error.cause?.code ?? error.cause?.message ?? 'no cause'})` }));
    return Promise.race([request, pause(settleLimitMs).then(() => ({ kind, pending: true }))]);
}

try {
    const port = await run.switchyard.start(writeConfig(run.directory));

    await check(`${4 * clientsOfEachKind} POSTs at once over a cap of ${perAddressCap}: each settles with 200, or 503 and Retry-After`, async () => {
        const sent = [];
        for (const kind of Object.keys(kinds)) {
            for (let i = 0; i < clientsOfEachKind; ++i)
                sent.push(send(port, kind));
        }
        const outcomes = await Promise.all(sent);

        const pending = outcomes.filter((outcome) => outcome.pending);
        const rejected = outcomes.filter((outcome) => outcome.rejected);
        const tally = (list) => Object.keys(kinds)
            .map((kind) => `${list.filter((outcome) => outcome.kind === kind).length} ${kind}`)
            .join(', ');
        assert.equal(pending.length, 0, `never settled: ${tally(pending)}`);
        assert.equal(rejected.length, 0, `rejected: ${tally(rejected)}; first: ${rejected[0]?.rejected}`);
        for (const outcome of outcomes) {
            if (outcome.status === 200)
                continue;
            assert.equal(outcome.status, 503, `${outcome.kind}: ${outcome.body.slice(0, 300)}`);
            assert.equal(outcome.retryAfter, '1', `${outcome.kind}: the 503's Retry-After`);
            assert.equal(JSON.parse(outcome.body).error.code, 'too_many_connections');
        }
        const answered = outcomes.filter((outcome) => outcome.status === 200).length;
        assert.ok(answered >= 1, 'no request was admitted and answered');
        assert.ok(outcomes.length - answered >= 256, `only ${outcomes.length - answered} were refused`);
    });

    await check('switchyard exits 0 on SIGTERM', () => run.switchyard.stop());
} catch (error) {
    run.failEarly(run.describe(error));
}
run.finish();
