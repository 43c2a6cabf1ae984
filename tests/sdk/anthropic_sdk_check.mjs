// The official Anthropic Node SDK (@anthropic-ai/sdk), pinned in package.json, as a client of
// Switchyard's Messages API. Behind a model served by an `anthropic` provider, POST /v1/messages
// and POST /v1/messages/count_tokens are passed through: a fake Anthropic provider checks that it
// got the client's body with only `model` renamed (prompt-cache markers, extended thinking and
// fields the gateway does not know included), the client's anthropic-version, the client's betas
// merged with the provider's, and the provider's own key; the SDK must read back exactly what the
// fake wrote, whole and streamed. Behind a model served by an OpenAI-compatible provider the same
// SDK requests are translated, with what could not be carried named in a response header.
//
//   node anthropic_sdk_check.mjs PATH/TO/switchyard
//
// Prints one line per check and `N passed, N failed`; exits 1 when any check failed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { LoopbackServer, SdkRun, checkLimitMs, pause } from './sdk_harness.mjs';

const sdkPackage = '@anthropic-ai/sdk';

// The names and secrets of the configuration, chosen so that each one can be told apart.
const setup = {
    anthropicProvider: 'fake-claude',
    anthropicModel: 'claude-gateway',                // what the client asks for
    anthropicUpstreamModel: 'claude-upstream-name',  // what the provider knows it as
    openaiProvider: 'fake-openai',
    openaiModel: 'gpt-gateway',
    openaiUpstreamModel: 'gpt-upstream-name',
    keyVariable: 'SWITCHYARD_SDK_CHECK_ANTHROPIC_KEY',
    providerKey: 'provider-key-from-the-environment',
    clientKey: 'client-key-that-must-stay-with-the-gateway',
    // Not what the SDK sends: the provider must get the client's version, not this one.
    configuredVersion: '2023-01-01',
    clientBeta: 'client-only-feature-2026-01-01',
    providerBeta: 'provider-only-feature-2026-01-01',
    sharedBeta: 'shared-feature-2026-01-01',
};

// What the fakes answer.
const fake = {
    thinking: 'The user wants a greeting. A short one will do.',
    signature: 'EqQBCkYIBxgCKkBfakeSignatureThatMustArriveByteForByte+/=0123456789abcdefABCDEF==',
    text: 'Hello from the fake Anthropic provider.',
    usage: {
        input_tokens: 21, output_tokens: 34,
        cache_creation_input_tokens: 1500, cache_read_input_tokens: 3000,
        service_tier: 'standard',
    },
    inputTokens: 1234,
    chatText: 'Hello from the fake chat completions provider.',
    chatUsage: { prompt_tokens: 13, completion_tokens: 9, total_tokens: 22 },
};

const run = new SdkRun('anthropic_sdk_check');
const sdkVersion = run.installedSdk(sdkPackage);
const { default: Anthropic } = await import(sdkPackage);
run.describeErrorsWith((error) => (error instanceof Anthropic.APIError
    ? `${error.constructor.name} (HTTP ${error.status}): ${error.message}`
    : String(error?.message ?? error)));
const check = (name, body) => run.check(name, body);

// --- Fake providers --------------------------------------------------------------------------

// An HTTP server on a free loopback port that records every request (method, path, headers as
// received, body as text and as JSON) and hands it to `route`.
class FakeProvider {
    requests = [];
    #route;
    #server = new LoopbackServer((request, response) => this.#handle(request, response));

    constructor(route) {
        this.#route = route;
    }

    start() {
        return this.#server.start();
    }

    stop() {
        this.#server.stop();
    }

    lastRequest(pathName) {
        const found = this.requests.findLast((request) => request.path === pathName);
        assert.ok(found, `the fake provider got no request on ${pathName}; it got: ${
            this.requests.map((request) => `${request.method} ${request.url}`).join(', ') || 'none'}`);
        return found;
    }

    async #handle(request, response) {
        const chunks = [];
        for await (const chunk of request)
            chunks.push(chunk);
        const raw = Buffer.concat(chunks).toString('utf8');
        let body;
        try {
            body = JSON.parse(raw);
        } catch {
            body = undefined;
        }
        const url = new URL(request.url, 'http://fake.invalid');
        const record = {
            method: request.method, url: request.url, path: url.pathname,
            headers: request.headersDistinct, raw, body,
        };
        this.requests.push(record);
        try {
            await this.#route(record, response);
        } catch (error) {
            if (!response.headersSent)
                response.writeHead(500, { 'content-type': 'text/plain' });
            response.end(`the fake provider failed: ${error?.stack ?? error}`);
        }
    }
}

function sendJson(response, status, value) {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify(value));
}

function sseFrame(event, data) {
    return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

// The whole answer of the fake Anthropic provider: a thinking block with its signature, a text
// block, and usage with both prompt-cache counts.
function anthropicMessage(model) {
    return {
        id: 'msg_fake_passthrough', type: 'message', role: 'assistant', model,
        content: [
            { type: 'thinking', thinking: fake.thinking, signature: fake.signature },
            { type: 'text', text: fake.text },
        ],
        stop_reason: 'end_turn', stop_sequence: null,
        usage: fake.usage,
    };
}

// A real Messages event stream: every event is written with its `event:` name, in this order.
function anthropicEvents(model) {
    const pieces = (text, size) => text.match(new RegExp(`[^]{1,${size}}`, 'g'));
    const { output_tokens: _, ...startUsage } = fake.usage;
    return [
        { type: 'message_start', message: { ...anthropicMessage(model), id: 'msg_fake_stream', content: [], stop_reason: null, usage: { ...startUsage, output_tokens: 1 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
        ...pieces(fake.thinking, 16).map((thinking) => ({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking } })),
        { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: fake.signature } },
        { type: 'content_block_stop', index: 0 },
        { type: 'ping' },
        { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
        ...pieces(fake.text, 10).map((text) => ({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text } })),
        { type: 'content_block_stop', index: 1 },
        { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: fake.usage },
        { type: 'message_stop' },
    ];
}

class FakeAnthropic extends FakeProvider {
    streams = []; // each stream's events as written, oldest first

    constructor() {
        super((request, response) => this.#serve(request, response));
    }

    async #serve(request, response) {
        const error = (status, type, message) =>
            sendJson(response, status, { type: 'error', error: { type, message } });
        if (request.method !== 'POST')
            return error(405, 'invalid_request_error', `the fake provider does not serve ${request.method}`);
        if (request.body === undefined)
            return error(400, 'invalid_request_error', `the fake provider got a body that is not JSON: ${request.raw}`);
        if (request.path === '/v1/messages/count_tokens')
            return sendJson(response, 200, { input_tokens: fake.inputTokens });
        if (request.path !== '/v1/messages')
            return error(404, 'not_found_error', `the fake provider does not serve ${request.path}`);
        if (!request.body.stream)
            return sendJson(response, 200, anthropicMessage(request.body.model));
        const events = anthropicEvents(request.body.model);
        this.streams.push(events);
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const event of events) {
            response.write(sseFrame(event.type, event));
            await pause(5); // separate reads for the gateway, as a real provider's tokens are
        }
        response.end();
    }
}

class FakeOpenAi extends FakeProvider {
    constructor() {
        super((request, response) => this.#serve(request, response));
    }

    async #serve(request, response) {
        const error = (status, message) =>
            sendJson(response, status, { error: { message, type: 'invalid_request_error', code: null } });
        if (`${request.method} ${request.path}` !== 'POST /v1/chat/completions')
            return error(404, `the fake provider does not serve ${request.method} ${request.path}`);
        if (request.body === undefined)
            return error(400, `the fake provider got a body that is not JSON: ${request.raw}`);
        const envelope = { id: 'chatcmpl-fake', created: 1700000000, model: request.body.model };
        if (!request.body.stream) {
            return sendJson(response, 200, {
                ...envelope, object: 'chat.completion',
                choices: [{ index: 0, message: { role: 'assistant', content: fake.chatText }, finish_reason: 'stop' }],
                usage: fake.chatUsage,
            });
        }
        const chunk = (delta, finish = null) => ({
            ...envelope, object: 'chat.completion.chunk',
            choices: [{ index: 0, delta, finish_reason: finish }],
        });
        const chunks = [
            chunk({ role: 'assistant', content: '' }),
            ...fake.chatText.match(/.{1,12}/g).map((content) => chunk({ content })),
            chunk({}, 'stop'),
        ];
        if (request.body.stream_options?.include_usage === true)
            chunks.push({ ...envelope, object: 'chat.completion.chunk', choices: [], usage: fake.chatUsage });
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const data of chunks) {
            response.write(`data: ${JSON.stringify(data)}\n\n`);
            await pause(5);
        }
        response.end('data: [DONE]\n\n');
    }
}

// --- Switchyard, started as an operator would ------------------------------------------------

function writeConfig(directory, anthropicUrl, openaiUrl) {
    const file = path.join(directory, 'switchyard.yaml');
    fs.writeFileSync(file, `listen: 127.0.0.1:8080
# The checks assert what the fake providers were sent: no probe requests in between.
probes:
  enabled: false
providers:
  - id: ${setup.anthropicProvider}
    kind: anthropic
    base_url: ${anthropicUrl}
    api_key_env: ${setup.keyVariable}
    models:
      - {name: ${setup.anthropicModel}, upstream: ${setup.anthropicUpstreamModel}}
    anthropic:
      version: "${setup.configuredVersion}"
      beta: [${setup.providerBeta}, ${setup.sharedBeta}]
  - id: ${setup.openaiProvider}
    kind: openai
    base_url: ${openaiUrl}
    models:
      - {name: ${setup.openaiModel}, upstream: ${setup.openaiUpstreamModel}}
`);
    return file;
}

// --- What the SDK sent -----------------------------------------------------------------------

// The SDK's own fetch, wrapped: every request's URL, headers and body exactly as the SDK wrote
// them, so the fake provider's side can be compared with the client's own bytes.
class SentRequests {
    requests = [];

    fetch = async (url, init = {}) => {
        const body = init.body;
        this.requests.push({
            path: new URL(String(url)).pathname,
            headers: new Headers(init.headers),
            raw: typeof body === 'string' ? body : body == null ? '' : Buffer.from(body).toString('utf8'),
        });
        return fetch(url, init);
    };

    last(pathName) {
        const found = this.requests.findLast((request) => request.path === pathName);
        assert.ok(found, `the SDK sent no request on ${pathName}`);
        return found;
    }
}

// --- Checks ----------------------------------------------------------------------------------

// Every object in a JSON value that carries a prompt-cache marker.
function cacheMarkers(value) {
    if (Array.isArray(value))
        return value.flatMap(cacheMarkers);
    if (value === null || typeof value !== 'object')
        return [];
    const own = Object.hasOwn(value, 'cache_control') ? [value.cache_control] : [];
    return [...own, ...Object.values(value).flatMap(cacheMarkers)];
}

// One header as a list of comma-separated values, whether it came on one line or several.
function headerValues(headers, name) {
    return (headers[name] ?? []).flatMap((line) => line.split(',')).map((value) => value.trim()).filter(Boolean);
}

function assertProvider(response, provider) {
    assert.equal(response.headers.get('x-switchyard-provider'), provider, 'x-switchyard-provider');
}

// What the fake Anthropic provider must have got for the SDK's last request on `pathName`: the
// client's body with only `model` renamed, the client's anthropic-version, the client's betas and
// the provider's each once, and the provider's key instead of the client's.
function assertPassedThrough(sdk, provider, pathName, { betas }) {
    const sent = sdk.last(pathName);
    const got = provider.lastRequest(pathName);
    assert.equal(got.method, 'POST');
    assert.ok(got.body !== undefined, `the provider's body is not JSON: ${got.raw}`);
    const { model: clientModel, ...clientBody } = JSON.parse(sent.raw);
    const { model: providerModel, ...providerBody } = got.body;
    assert.equal(clientModel, setup.anthropicModel, 'the model the client asked for');
    assert.equal(providerModel, setup.anthropicUpstreamModel, 'the model the provider got: its own name');
    const sentMarkers = cacheMarkers(clientBody);
    assert.equal(sentMarkers.length, 4, 'the request carries 4 cache_control markers: system (2), tool, user block');
    assert.deepEqual(cacheMarkers(providerBody), sentMarkers, 'every cache_control marker arrived');
    for (const field of ['thinking', 'context_management', 'top_k', 'metadata', 'service_tier', 'system', 'tools']) {
        if (Object.hasOwn(clientBody, field))
            assert.deepEqual(providerBody[field], clientBody[field], `\`${field}\` as the client sent it`);
    }
    assert.deepEqual(providerBody, clientBody, 'the body as the client sent it, but for `model`');
    // And byte for byte: the client's bytes with only the model's JSON token replaced.
    const modelToken = (name) => `"model":${JSON.stringify(name)}`;
    assert.ok(sent.raw.includes(modelToken(setup.anthropicModel)), `the SDK's body: ${sent.raw}`);
    assert.equal(got.raw, sent.raw.replace(modelToken(setup.anthropicModel), modelToken(setup.anthropicUpstreamModel)),
        'the provider\'s bytes: the client\'s, with only the model replaced');

    const clientVersion = sent.headers.get('anthropic-version');
    assert.ok(clientVersion, 'the SDK sent an anthropic-version');
    assert.notEqual(clientVersion, setup.configuredVersion, 'the configured version must differ from the SDK\'s to prove anything');
    assert.deepEqual(got.headers['anthropic-version'], [clientVersion], 'the client\'s anthropic-version, once');

    const betasGot = headerValues(got.headers, 'anthropic-beta');
    const betasSent = (sent.headers.get('anthropic-beta') ?? '').split(',').map((value) => value.trim()).filter(Boolean);
    for (const beta of betas)
        assert.ok(betasSent.includes(beta), `the SDK sent the beta ${beta}: ${betasSent.join(',')}`);
    const expected = [...new Set([...betasSent, setup.providerBeta, setup.sharedBeta])];
    assert.deepEqual(betasGot, expected,
        `anthropic-beta: the client's values, then the provider's it did not name, each once (got ${JSON.stringify(got.headers['anthropic-beta'])})`);

    assert.deepEqual(got.headers['x-api-key'], [setup.providerKey], 'x-api-key: the provider\'s own key, once');
    assert.equal(got.headers.authorization, undefined, 'no Authorization reaches the provider');
    for (const [name, values] of Object.entries(got.headers))
        assert.ok(!values.some((value) => value.includes(setup.clientKey)), `the client's key reached the provider in ${name}`);
}

// A Messages event stream as text, as its events: `event:` name and parsed `data:`. Comments
// (lines starting with `:`) are left out, as every SSE reader does.
function parseEventStream(text) {
    const events = [];
    for (const block of text.split(/\r?\n\r?\n/)) {
        let event = null;
        const data = [];
        for (const line of block.split(/\r?\n/)) {
            if (line.startsWith(':') || line === '')
                continue;
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event')
                event = value;
            else if (field === 'data')
                data.push(value);
        }
        if (event !== null || data.length > 0)
            events.push({ event, data: JSON.parse(data.join('\n')) });
    }
    return events;
}

function textOf(content) {
    if (typeof content === 'string')
        return content;
    return (content ?? []).map((part) => part.text ?? '').join('');
}

// The requests. The system prompt, the tool and a user content block each carry a cache marker;
// extended thinking is on; `top_k`, `metadata` and `service_tier` are Anthropic's own, and
// `context_management` stands for a field newer than the gateway.
const systemBlocks = [
    { type: 'text', text: 'You are a terse assistant.', cache_control: { type: 'ephemeral' } },
    { type: 'text', text: 'Long shared instructions that are worth caching. '.repeat(8), cache_control: { type: 'ephemeral', ttl: '1h' } },
];
const weatherTool = {
    name: 'get_weather',
    description: 'The current weather in a city.',
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    cache_control: { type: 'ephemeral' },
};
const userTurn = {
    role: 'user',
    content: [
        { type: 'text', text: 'A long document the conversation keeps coming back to.', cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Say hello.' },
    ],
};
const thinking = { type: 'enabled', budget_tokens: 2048 };

function passThroughRequest(extra = {}) {
    return {
        model: setup.anthropicModel,
        max_tokens: 4096,
        system: systemBlocks,
        tools: [weatherTool],
        messages: [userTurn],
        thinking,
        top_k: 40,
        metadata: { user_id: 'user-1234' },
        service_tier: 'auto',
        context_management: { edits: [{ type: 'clear_tool_uses_20250919', keep: { type: 'tool_uses', value: 3 } }] },
        ...extra,
    };
}

function translatedRequest(extra = {}) {
    return {
        model: setup.openaiModel,
        max_tokens: 512,
        system: systemBlocks,
        messages: [userTurn],
        thinking,
        ...extra,
    };
}

const clientBetas = [setup.clientBeta, setup.sharedBeta];

async function runChecks(client, sdk, baseUrl, anthropic, openai) {
    console.log(`# ${sdkPackage} ${sdkVersion} on Node ${process.versions.node}`);

    // --- Passed through to an anthropic provider ---

    await check('beta.messages.create with cache_control and thinking, passed through to an anthropic provider', async () => {
        const { data: message, response } = await client.beta.messages
            .create({ ...passThroughRequest(), betas: clientBetas })
            .withResponse();
        assertProvider(response, setup.anthropicProvider);
        assertPassedThrough(sdk, anthropic, '/v1/messages', { betas: clientBetas });
        assert.deepEqual(message, anthropicMessage(setup.anthropicUpstreamModel), 'the message as the provider wrote it');
        assert.equal(message.content[0].signature, fake.signature);
        assert.equal(message.usage.cache_read_input_tokens, fake.usage.cache_read_input_tokens);
        assert.equal(message.usage.cache_creation_input_tokens, fake.usage.cache_creation_input_tokens);
    });

    await check('messages.create with anthropic-beta set by header, passed through', async () => {
        const betaHeader = clientBetas.join(',');
        const { data: message, response } = await client.messages
            .create(passThroughRequest(), { headers: { 'anthropic-beta': betaHeader } })
            .withResponse();
        assertProvider(response, setup.anthropicProvider);
        assertPassedThrough(sdk, anthropic, '/v1/messages', { betas: clientBetas });
        assert.deepEqual(message, anthropicMessage(setup.anthropicUpstreamModel), 'the message as the provider wrote it');
    });

    await check('messages.stream with thinking, passed through: the same events, the exact signature', async () => {
        const stream = client.messages.stream(passThroughRequest(), { headers: { 'anthropic-beta': clientBetas.join(',') } });
        // Each event as the SDK saw it when it arrived: the SDK builds its message snapshot in
        // message_start's own object, so the event objects change as later events arrive.
        const events = [];
        stream.on('streamEvent', (event) => events.push(structuredClone(event)));
        const { response } = await stream.withResponse();
        assertProvider(response, setup.anthropicProvider);
        const final = await stream.finalMessage();
        assertPassedThrough(sdk, anthropic, '/v1/messages', { betas: clientBetas });
        assert.equal(anthropic.lastRequest('/v1/messages').body.stream, true, 'the provider was asked to stream');
        // The SDK leaves out `ping` events by design; everything else must be what the provider sent.
        const written = anthropic.streams.at(-1).filter((event) => event.type !== 'ping');
        assert.deepEqual(events.map((event) => event.type), written.map((event) => event.type), 'the event types, in order');
        assert.deepEqual(events, written, 'the events as the provider wrote them');
        assert.deepEqual(final.content.map((block) => block.type), ['thinking', 'text']);
        assert.equal(final.content[0].thinking, fake.thinking);
        assert.equal(final.content[0].signature, fake.signature);
        assert.equal(final.content[1].text, fake.text);
        assert.equal(final.stop_reason, 'end_turn');
        assert.equal(final.usage.cache_read_input_tokens, fake.usage.cache_read_input_tokens);
        assert.equal(final.usage.cache_creation_input_tokens, fake.usage.cache_creation_input_tokens);
        assert.equal(final.usage.output_tokens, fake.usage.output_tokens);
    });

    await check('messages.create stream: true, passed through: every event relayed, ping included', async () => {
        const response = await client.messages
            .create(passThroughRequest({ stream: true }), { headers: { 'anthropic-beta': clientBetas.join(',') } })
            .asResponse();
        assert.equal(response.status, 200);
        assertProvider(response, setup.anthropicProvider);
        assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
        const relayed = parseEventStream(await response.text());
        const written = anthropic.streams.at(-1).map((event) => ({ event: event.type, data: event }));
        assert.deepEqual(relayed.map((event) => event.event), written.map((event) => event.event), 'the event names, in order');
        assert.deepEqual(relayed, written, 'the events as the provider wrote them');
        assertPassedThrough(sdk, anthropic, '/v1/messages', { betas: clientBetas });
    });

    await check('messages.countTokens, passed through to an anthropic provider', async () => {
        const { system, tools, messages, thinking: thinkingOn } = passThroughRequest();
        const { data: count, response } = await client.messages
            .countTokens({ model: setup.anthropicModel, system, tools, messages, thinking: thinkingOn },
                { headers: { 'anthropic-beta': clientBetas.join(',') } })
            .withResponse();
        assertProvider(response, setup.anthropicProvider);
        assert.deepEqual(count, { input_tokens: fake.inputTokens });
        assertPassedThrough(sdk, anthropic, '/v1/messages/count_tokens', { betas: clientBetas });
    });

    // --- Translated for an OpenAI-compatible provider ---

    await check('messages.create with cache_control and thinking, translated to chat completions', async () => {
        const { data: message, response } = await client.messages.create(translatedRequest()).withResponse();
        assertProvider(response, setup.openaiProvider);
        const ignored = (response.headers.get('x-switchyard-ignored-fields') ?? '').split(',').map((name) => name.trim());
        for (const field of ['thinking', 'cache_control'])
            assert.ok(ignored.includes(field), `x-switchyard-ignored-fields names ${field}: ${response.headers.get('x-switchyard-ignored-fields')}`);
        assert.equal(message.type, 'message');
        assert.equal(message.role, 'assistant');
        assert.deepEqual(message.content, [{ type: 'text', text: fake.chatText }]);
        assert.equal(message.stop_reason, 'end_turn');
        assert.equal(message.usage.input_tokens, fake.chatUsage.prompt_tokens);
        assert.equal(message.usage.output_tokens, fake.chatUsage.completion_tokens);
        const { body } = openai.lastRequest('/v1/chat/completions');
        assert.equal(body.model, setup.openaiUpstreamModel);
        assert.ok(Array.isArray(body.messages), `a chat completion body: ${JSON.stringify(body)}`);
        assert.equal(body.messages[0].role, 'system');
        assert.ok(textOf(body.messages[0].content).includes(systemBlocks[0].text), 'the system prompt');
        assert.equal(body.messages.at(-1).role, 'user');
        assert.ok(textOf(body.messages.at(-1).content).includes('Say hello.'), 'the user\'s text');
        assert.equal(body.max_tokens ?? body.max_completion_tokens, 512);
        assert.equal(cacheMarkers(body).length, 0, 'no cache_control reaches a chat completions provider');
        assert.equal(body.thinking, undefined, 'no thinking reaches a chat completions provider');
    });

    await check('messages.stream, translated to chat completions', async () => {
        const stream = client.messages.stream(translatedRequest());
        const { response } = await stream.withResponse();
        assertProvider(response, setup.openaiProvider);
        const types = [];
        for await (const event of stream)
            types.push(event.type);
        const final = await stream.finalMessage();
        assert.equal(types[0], 'message_start', `event types: ${types.join(', ')}`);
        assert.equal(types.at(-1), 'message_stop', `event types: ${types.join(', ')}`);
        assert.deepEqual(final.content, [{ type: 'text', text: fake.chatText }]);
        assert.equal(final.stop_reason, 'end_turn');
        assert.equal(final.usage.output_tokens, fake.chatUsage.completion_tokens);
        assert.equal(openai.lastRequest('/v1/chat/completions').body.stream, true);
    });

    await check('messages.countTokens for an OpenAI-compatible model: an estimate, said to be one', async () => {
        const before = openai.requests.length;
        const { system, messages } = translatedRequest();
        const { data: count, response } = await client.messages
            .countTokens({ model: setup.openaiModel, system, messages })
            .withResponse();
        assert.ok(Number.isInteger(count.input_tokens) && count.input_tokens > 0, `input_tokens: ${JSON.stringify(count)}`);
        assert.equal(response.headers.get('x-switchyard-tokens-estimated'), 'true', 'x-switchyard-tokens-estimated');
        assert.equal(openai.requests.length, before, 'counting does not call the provider');
    });

    // --- Not a Messages operation ---

    await check('POST /v1/messages/nope: 404 in Anthropic\'s error shape', async () => {
        const response = await fetch(`${baseUrl}/v1/messages/nope`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': setup.clientKey, 'anthropic-version': '2023-06-01' },
            body: JSON.stringify({ model: setup.anthropicModel, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
            signal: AbortSignal.timeout(checkLimitMs),
        });
        const text = await response.text();
        assert.equal(response.status, 404, `status; body: ${text}`);
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
        const body = JSON.parse(text);
        assert.equal(body.type, 'error', `body: ${text}`);
        assert.equal(body.error?.type, 'not_found_error', `body: ${text}`);
        assert.ok(typeof body.error.message === 'string' && body.error.message.length > 0, `body: ${text}`);
        assert.ok(!anthropic.requests.some((request) => request.path === '/v1/messages/nope'), 'no provider was called');
    });
}

// --- Main ------------------------------------------------------------------------------------

const anthropic = new FakeAnthropic();
const openai = new FakeOpenAi();

try {
    const port = await run.switchyard.start(
        writeConfig(run.directory, await anthropic.start(), await openai.start()),
        { [setup.keyVariable]: setup.providerKey });
    const baseUrl = `http://127.0.0.1:${port}`;
    const sdk = new SentRequests();
    const client = new Anthropic({
        baseURL: baseUrl, apiKey: setup.clientKey, authToken: null,
        maxRetries: 0, timeout: checkLimitMs, fetch: sdk.fetch,
    });
    await runChecks(client, sdk, baseUrl, anthropic, openai);
    await check('switchyard exits 0 on SIGTERM', () => run.switchyard.stop());
} catch (error) {
    run.failEarly(run.describe(error));
} finally {
    anthropic.stop();
    openai.stop();
}
run.finish();
