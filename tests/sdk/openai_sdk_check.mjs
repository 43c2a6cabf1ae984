// The official openai Node SDK, pinned in package.json, as a client of Switchyard: Responses API
// calls (whole, streamed, a function tool round trip), the gateway's own stored and background
// responses on a chat-only provider (retrieve, resume a stream, cancel, delete,
// previous_response_id, input items) and embeddings, against a fake OpenAI-compatible upstream
// and against the simulated provider. What the SDK parses and types is the contract: a gateway
// answer the SDK cannot read, or reads differently, fails here.
//
//   node openai_sdk_check.mjs PATH/TO/switchyard
//
// Prints one line per check and `N passed, N failed`; exits 1 when any check failed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { LoopbackServer, SdkRun, checkLimitMs, pause } from './sdk_harness.mjs';

// What the fake upstream answers. The vector's numbers are exact in float32, so the base64 form
// (little-endian float32, what the SDK asks for by default) decodes to the very same numbers.
const fake = {
    chatText: 'Hello from the fake chat completions upstream.',
    nativeText: 'Hello from the fake Responses upstream.',
    toolCallId: 'call_fake_weather',
    toolArguments: '{"city":"Paris"}',
    embedding: [0.25, -0.5, 0.125, 1],
    chatUsage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
    // `cut-chat`: the first stream is cut after `cutAfter` characters, and a continuation (vLLM's
    // continue_final_message) streams the rest of the same text.
    cutText: 'The quick brown fox jumps over the lazy dog, twice.',
    cutAfter: 20,
    // `slow-chat`: streamed a word every `slowWordMs`, so that a client can leave mid-answer.
    slowText: 'One two three four five six seven eight nine ten eleven twelve.',
    slowWordMs: 100,
    // `held-chat`: the stream begins and then nothing more comes until the gateway hangs up.
};

// A generous safety limit for waiting on something that is not a reply to our own request (a
// background task's progress, what the fake upstream saw): below the check's own limit, so that
// a failure says what never happened. Nothing passes or fails on how soon it happens.
const waitLimitMs = 15_000;

// Polls `condition` (sync or async) until it returns a truthy value, which it returns.
async function until(what, condition) {
    const giveUp = Date.now() + waitLimitMs;
    for (;;) {
        const value = await condition();
        if (value)
            return value;
        if (Date.now() > giveUp)
            throw new Error(`gave up after ${waitLimitMs / 1000} s waiting for ${what}`);
        await pause(10);
    }
}

const run = new SdkRun('openai_sdk_check');
const sdkVersion = run.installedSdk('openai');
const { default: OpenAI } = await import('openai');
run.describeErrorsWith((error) => (error instanceof OpenAI.APIError
    ? `${error.constructor.name} (HTTP ${error.status}): ${error.message}`
    : String(error?.message ?? error)));
const check = (name, body) => run.check(name, body);

// --- The fake OpenAI-compatible upstream -----------------------------------------------------

function textOf(content) {
    if (typeof content === 'string')
        return content;
    return (content ?? []).map((part) => part.text ?? '').join('');
}

function float32Base64(numbers) {
    const bytes = Buffer.alloc(numbers.length * 4);
    numbers.forEach((number, index) => bytes.writeFloatLE(number, index * 4));
    return bytes.toString('base64');
}

class FakeUpstream {
    requests = [];        // { path, body } of every request, oldest first
    nativeAnswers = [];   // each native Responses answer as written: a response, or its events
    held = [];            // each `held-chat` request: { body, response, hungUp }, hungUp once the gateway hung up
    slowGate = null;      // when set, `slow-chat` waits for this promise after its first word
    #server = new LoopbackServer((request, response) => this.#handle(request, response));

    start() {
        return this.#server.start();
    }

    stop() {
        this.#server.stop();
    }

    lastRequest(pathName) {
        const found = this.requests.findLast((request) => request.path === pathName);
        assert.ok(found, `the fake upstream got no request on ${pathName}`);
        return found.body;
    }

    async #handle(request, response) {
        let raw = '';
        for await (const chunk of request)
            raw += chunk;
        let body;
        try {
            body = JSON.parse(raw);
        } catch {
            return this.#error(response, 400, `the fake upstream got a body that is not JSON: ${raw}`);
        }
        this.requests.push({ path: request.url, body });
        const route = `${request.method} ${request.url}`;
        if (route === 'POST /v1/chat/completions')
            return this.#chat(body, response);
        if (route === 'POST /v1/embeddings')
            return this.#embeddings(body, response);
        if (route === 'POST /v1/responses')
            return this.#responses(body, response);
        return this.#error(response, 404, `the fake upstream does not serve ${route}`);
    }

    #error(response, status, message) {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: null } }));
    }

    // A tool call when the user just spoke and tools are offered; after a tool result, a text
    // that quotes it (so a round trip shows the result arrived); otherwise the fixed text.
    #chatAnswer(body) {
        const messages = body.messages ?? [];
        const last = messages.at(-1);
        if (last?.role === 'tool') {
            const call = messages
                .findLast((message) => message.role === 'assistant' && message.tool_calls)
                ?.tool_calls.find((toolCall) => toolCall.id === last.tool_call_id);
            if (!call)
                return { error: `the tool message answers call ${last.tool_call_id}, which no earlier assistant message made` };
            return { content: `The tool ${call.function.name} answered ${textOf(last.content)}` };
        }
        if (body.tools?.length && last?.role === 'user') {
            return {
                toolCalls: [{
                    id: fake.toolCallId,
                    type: 'function',
                    function: { name: body.tools[0].function.name, arguments: fake.toolArguments },
                }],
            };
        }
        return { content: fake.chatText };
    }

    // A vLLM-like server behind `cut-chat`: a new answer breaks off mid-stream (the socket is
    // destroyed after a few chunks); asked to continue a final assistant message, it streams
    // the rest of the same text.
    async #cutChat(body, response) {
        const last = body.messages.at(-1);
        const continuing = body.continue_final_message === true && last?.role === 'assistant';
        if (body.continue_final_message !== undefined && !continuing)
            return this.#error(response, 400, 'continue_final_message needs a final assistant message');
        const envelope = { id: 'chatcmpl-cut', object: 'chat.completion.chunk', created: 1700000000, model: body.model };
        const chunk = (delta, finish = null) => `data: ${JSON.stringify({ ...envelope, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        response.write(chunk({ role: 'assistant', content: '' }));
        const from = continuing ? textOf(last.content).length : 0;
        const to = continuing ? fake.cutText.length : fake.cutAfter;
        for (const piece of fake.cutText.slice(from, to).match(/.{1,5}/g)) {
            response.write(chunk({ content: piece }));
            await pause(5);
        }
        if (!continuing)
            return response.socket.destroy(); // cut: no finish, no [DONE]
        response.write(chunk({}, 'stop'));
        response.end('data: [DONE]\n\n');
    }

    // A chat stream of `fake.slowText`, a word every `fake.slowWordMs` (and after the first word
    // a wait for `slowGate`, when set); whole when not streamed.
    async #slowChat(body, response) {
        const envelope = { id: 'chatcmpl-slow', created: 1700000000, model: body.model };
        if (!body.stream) {
            response.writeHead(200, { 'content-type': 'application/json' });
            return response.end(JSON.stringify({
                ...envelope, object: 'chat.completion',
                choices: [{ index: 0, message: { role: 'assistant', content: fake.slowText }, finish_reason: 'stop' }],
                usage: fake.chatUsage,
            }));
        }
        const chunk = (delta, finish = null) => `data: ${JSON.stringify({
            ...envelope, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        response.write(chunk({ role: 'assistant', content: '' }));
        for (const [index, word] of fake.slowText.match(/\S+\s*/g).entries()) {
            await pause(fake.slowWordMs);
            if (index === 1 && this.slowGate)
                await this.slowGate;
            if (response.destroyed)
                return;
            response.write(chunk({ content: word }));
        }
        response.write(chunk({}, 'stop'));
        if (body.stream_options?.include_usage === true)
            response.write(`data: ${JSON.stringify({ ...envelope, object: 'chat.completion.chunk', choices: [], usage: fake.chatUsage })}\n\n`);
        response.end('data: [DONE]\n\n');
    }

    // A stream that begins (headers and the role chunk) and then holds until the gateway hangs up.
    #heldChat(body, response) {
        const held = { body, response, hungUp: false };
        response.once('close', () => { held.hungUp = true; });
        this.held.push(held);
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        response.write(`data: ${JSON.stringify({
            id: 'chatcmpl-held', object: 'chat.completion.chunk', created: 1700000000, model: body.model,
            choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] })}\n\n`);
    }

    async #chat(body, response) {
        if (body.model === 'cut-chat-upstream')
            return this.#cutChat(body, response);
        if (body.model === 'slow-chat-upstream')
            return this.#slowChat(body, response);
        if (body.model === 'held-chat-upstream')
            return this.#heldChat(body, response);
        const answer = this.#chatAnswer(body);
        if (answer.error)
            return this.#error(response, 400, answer.error);
        const finishReason = answer.toolCalls ? 'tool_calls' : 'stop';
        const envelope = { id: 'chatcmpl-fake', created: 1700000000, model: body.model };
        if (!body.stream) {
            const message = answer.toolCalls
                ? { role: 'assistant', content: null, tool_calls: answer.toolCalls }
                : { role: 'assistant', content: answer.content };
            response.writeHead(200, { 'content-type': 'application/json' });
            return response.end(JSON.stringify({
                ...envelope, object: 'chat.completion',
                choices: [{ index: 0, message, finish_reason: finishReason }],
                usage: fake.chatUsage,
            }));
        }
        const withUsage = body.stream_options?.include_usage === true;
        const chunk = (delta, finish = null) => ({
            ...envelope, object: 'chat.completion.chunk',
            choices: [{ index: 0, delta, finish_reason: finish }],
            ...(withUsage ? { usage: null } : {}),
        });
        const chunks = [chunk({ role: 'assistant', content: '' })];
        if (answer.toolCalls) {
            const [call] = answer.toolCalls;
            chunks.push(chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
            chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] }));
        } else {
            for (const piece of answer.content.match(/.{1,12}/g))
                chunks.push(chunk({ content: piece }));
        }
        chunks.push(chunk({}, finishReason));
        if (withUsage)
            chunks.push({ ...envelope, object: 'chat.completion.chunk', choices: [], usage: fake.chatUsage });
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const data of chunks) {
            response.write(`data: ${JSON.stringify(data)}\n\n`);
            await pause(5); // separate reads for the gateway, as a real upstream's tokens are
        }
        response.end('data: [DONE]\n\n');
    }

    #embeddings(body, response) {
        const inputs = Array.isArray(body.input) ? body.input : [body.input];
        const embedding = body.encoding_format === 'base64' ? float32Base64(fake.embedding) : fake.embedding;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({
            object: 'list',
            data: inputs.map((_, index) => ({ object: 'embedding', index, embedding })),
            model: body.model,
            usage: { prompt_tokens: 2 * inputs.length, total_tokens: 2 * inputs.length },
        }));
    }

    // The Responses API as OpenAI serves it: a `response` object, or typed events from
    // `response.created` to `response.completed`, each with its sequence_number.
    async #responses(body, response) {
        const message = (status, text) => ({
            type: 'message', id: 'msg_fake_native', status, role: 'assistant',
            content: text === null ? [] : [{ type: 'output_text', text, annotations: [] }],
        });
        const responseObject = (status, output, usage) => ({
            id: 'resp_fake_native', object: 'response', created_at: 1700000000, status,
            error: null, incomplete_details: null, instructions: null, max_output_tokens: null,
            model: body.model, output, parallel_tool_calls: true, previous_response_id: null,
            reasoning: { effort: null, summary: null }, store: false, temperature: 1,
            text: { format: { type: 'text' } }, tool_choice: 'auto', tools: [], top_p: 1,
            truncation: 'disabled', usage, user: null, metadata: {},
        });
        const usage = {
            input_tokens: 9, input_tokens_details: { cached_tokens: 0 },
            output_tokens: 8, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 17,
        };
        const done = responseObject('completed', [message('completed', fake.nativeText)], usage);
        if (!body.stream) {
            this.nativeAnswers.push(done);
            response.writeHead(200, { 'content-type': 'application/json' });
            return response.end(JSON.stringify(done));
        }
        const part = { item_id: 'msg_fake_native', output_index: 0, content_index: 0 };
        const events = [
            { type: 'response.created', response: responseObject('in_progress', [], null) },
            { type: 'response.in_progress', response: responseObject('in_progress', [], null) },
            { type: 'response.output_item.added', output_index: 0, item: message('in_progress', null) },
            { type: 'response.content_part.added', ...part, part: { type: 'output_text', text: '', annotations: [] } },
            ...fake.nativeText.match(/.{1,10}/g).map((delta) => ({ type: 'response.output_text.delta', ...part, delta })),
            { type: 'response.output_text.done', ...part, text: fake.nativeText },
            { type: 'response.content_part.done', ...part, part: { type: 'output_text', text: fake.nativeText, annotations: [] } },
            { type: 'response.output_item.done', output_index: 0, item: message('completed', fake.nativeText) },
            { type: 'response.completed', response: done },
        ].map((event, sequence_number) => ({ ...event, sequence_number }));
        this.nativeAnswers.push(events);
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const event of events) {
            response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
            await pause(5);
        }
        response.end();
    }
}

// --- Switchyard, started as an operator would ------------------------------------------------

function writeConfig(directory, upstreamUrl) {
    const file = path.join(directory, 'switchyard.yaml');
    fs.writeFileSync(file, `listen: 127.0.0.1:8080
# Stored and background responses go to this run's own state database, not the user's.
state:
  directory: ${path.join(directory, 'state')}
# The checks assert what the fake upstream was sent: no probe requests in between.
probes:
  enabled: false
providers:
  # Chat completions only (no responses_api): stored and background responses are the gateway's.
  - id: fake-openai
    kind: openai
    base_url: ${upstreamUrl}
    models:
      - {name: fake-chat, upstream: fake-chat-upstream}
      - {name: slow-chat, upstream: slow-chat-upstream}
      - {name: held-chat, upstream: held-chat-upstream}
      - {name: fake-embed, upstream: fake-embed-upstream, endpoints: [embeddings], dimensions: 4}
  - id: fake-native
    kind: openai
    base_url: ${upstreamUrl}
    responses_api: true
    models: [native-chat]
  # Two vLLM-like providers of one model: a stream cut on either continues on the other.
  - id: fake-cut-a
    kind: openai
    base_url: ${upstreamUrl}
    continues_answers: true
    models: [{name: cut-chat, upstream: cut-chat-upstream}]
  - id: fake-cut-b
    kind: openai
    base_url: ${upstreamUrl}
    continues_answers: true
    models: [{name: cut-chat, upstream: cut-chat-upstream}]
  - id: simulated
    kind: simulated
    simulate: {latency: 0ms, first_token: 0ms, tokens_per_second: 1000, error_rate: 0, answer_tokens: 12}
    models:
      - sim-chat
      - {name: sim-embed, endpoints: [embeddings], dimensions: 16}
routes:
  - name: continued
    when: {field: model, eq: cut-chat}
    to: {pool: [fake-cut-a, fake-cut-b]}
    continue_streams: true
`);
    return file;
}

// --- Checks ----------------------------------------------------------------------------------

const outputText = (response) => response.output
    .filter((item) => item.type === 'message')
    .flatMap((item) => item.content)
    .filter((content) => content.type === 'output_text')
    .map((content) => content.text)
    .join('');

async function collect(stream) {
    const events = [];
    for await (const event of stream)
        events.push(event);
    return events;
}

// What every Responses stream must be, whoever produced it. Returns the final response.
function assertResponseStream(events) {
    const types = events.map((event) => event.type);
    assert.deepEqual(types.slice(0, 2), ['response.created', 'response.in_progress'], `event types: ${types.join(', ')}`);
    assert.equal(types.at(-1), 'response.completed', `event types: ${types.join(', ')}`);
    assert.deepEqual(events.map((event) => event.sequence_number), events.map((_, index) => index),
        'sequence_number counts 0..n-1');
    const final = events.at(-1).response;
    assert.equal(final.status, 'completed');
    const deltas = events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta).join('');
    assert.equal(deltas, outputText(final), 'the text deltas add up to the final text');
    for (const done of events.filter((event) => event.type === 'response.output_text.done'))
        assert.equal(done.text, deltas, 'response.output_text.done carries the whole text');
    return final;
}

function assertNotServed(error, errorClass, status, code) {
    assert.ok(error instanceof errorClass, `expected ${errorClass.name}, got ${run.describe(error)}`);
    assert.equal(error.status, status);
    assert.equal(error.code, code);
    return true;
}

// The id of a response the gateway keeps: its own, as OpenAI's look.
const storedId = /^resp_[0-9a-f]{32}$/;

// Retrieves a background response until it is no longer queued or in progress.
function finished(client, id) {
    return until(`background response ${id} to finish`, async () => {
        const response = await client.responses.retrieve(id);
        return ['queued', 'in_progress'].includes(response.status) ? null : response;
    });
}

const weatherTool = {
    type: 'function',
    name: 'get_weather',
    description: 'The current weather in a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    strict: false,
};

async function runChecks(client, upstream) {
    console.log(`# openai SDK ${sdkVersion}`);

    // Translated: the Responses API turned into chat completions for a provider without it.
    await check('responses.create, translated to chat completions', async () => {
        const response = await client.responses.create({ model: 'fake-chat', input: 'Say hello.' });
        assert.equal(response.object, 'response');
        assert.equal(response.status, 'completed');
        assert.equal(response.output_text, fake.chatText);
        assert.ok(response.usage?.input_tokens > 0, `usage: ${JSON.stringify(response.usage)}`);
        const sent = upstream.lastRequest('/v1/chat/completions');
        assert.equal(sent.model, 'fake-chat-upstream');
        assert.equal(textOf(sent.messages.at(-1).content), 'Say hello.');
    });

    await check('responses.create translated: the request echoed, ignored fields named in a header', async () => {
        const { data: response, response: http } = await client.responses.create({
            model: 'fake-chat', input: 'Say hello.', instructions: 'Be brief.', temperature: 0.5,
            tools: [weatherTool], tool_choice: 'none', include: ['reasoning.encrypted_content'],
        }).withResponse();
        assert.equal(response.status, 'completed');
        const echoed = { instructions: response.instructions, temperature: response.temperature,
            tools: response.tools, tool_choice: response.tool_choice, store: response.store,
            truncation: response.truncation };
        assert.deepEqual(echoed, {
            instructions: 'Be brief.', temperature: 0.5, tools: [weatherTool], tool_choice: 'none',
            store: false, truncation: 'disabled',
        }, `the response object: ${JSON.stringify(response)}`);
        assert.equal(http.headers.get('x-switchyard-ignored-fields'), 'include');
    });

    await check('responses.create stream, translated to chat completions', async () => {
        const events = await collect(await client.responses.create({ model: 'fake-chat', input: 'Say hello.', stream: true }));
        assert.equal(outputText(assertResponseStream(events)), fake.chatText);
        assert.equal(upstream.lastRequest('/v1/chat/completions').stream, true);
    });

    await check('responses.create function tool round trip, translated', async () => {
        const input = [{ role: 'user', content: 'What is the weather in Paris?' }];
        const first = await client.responses.create({ model: 'fake-chat', input, tools: [weatherTool] });
        const call = first.output.find((item) => item.type === 'function_call');
        assert.ok(call, `no function_call in output: ${JSON.stringify(first.output)}`);
        assert.equal(call.name, 'get_weather');
        assert.deepEqual(JSON.parse(call.arguments), JSON.parse(fake.toolArguments));
        assert.ok(typeof call.call_id === 'string' && call.call_id.length > 0, `call_id: ${call.call_id}`);
        const toolResult = '{"temperature_c":21}';
        const second = await client.responses.create({
            model: 'fake-chat',
            tools: [weatherTool],
            input: [...input, ...first.output, { type: 'function_call_output', call_id: call.call_id, output: toolResult }],
        });
        assert.equal(second.output_text, `The tool get_weather answered ${toolResult}`);
    });

    await check('responses.create stream with a function call, translated', async () => {
        const events = await collect(await client.responses.create({
            model: 'fake-chat', input: 'What is the weather in Paris?', tools: [weatherTool], stream: true,
        }));
        const final = assertResponseStream(events);
        const call = final.output.find((item) => item.type === 'function_call');
        assert.ok(call, `no function_call in the completed response: ${JSON.stringify(final.output)}`);
        assert.equal(call.name, 'get_weather');
        const argumentDeltas = events.filter((event) => event.type === 'response.function_call_arguments.delta')
            .map((event) => event.delta).join('');
        assert.equal(argumentDeltas, call.arguments, 'the argument deltas add up to the final arguments');
        assert.deepEqual(JSON.parse(call.arguments), JSON.parse(fake.toolArguments));
    });

    // Passed through: a provider with `responses_api: true` answers the Responses API itself.
    await check('responses.create, passed through to a Responses provider', async () => {
        const response = await client.responses.create({ model: 'native-chat', input: 'Say hello.' });
        const { output_text: text, ...relayed } = response; // output_text is the SDK's own addition
        assert.equal(text, fake.nativeText);
        assert.deepEqual(relayed, upstream.nativeAnswers.at(-1), 'the response as the upstream wrote it');
        assert.equal(upstream.lastRequest('/v1/responses').input, 'Say hello.');
    });

    await check('responses.create stream, passed through to a Responses provider', async () => {
        const events = await collect(await client.responses.create({ model: 'native-chat', input: 'Say hello.', stream: true }));
        assert.equal(outputText(assertResponseStream(events)), fake.nativeText);
        assert.deepEqual(events, upstream.nativeAnswers.at(-1), 'the events as the upstream wrote them');
    });

    // The simulated provider: whatever it says, it must reach the SDK as a valid response.
    await check('responses.create, simulated provider', async () => {
        const response = await client.responses.create({ model: 'sim-chat', input: 'Say hello.' });
        assert.equal(response.status, 'completed');
        assert.ok(response.output_text.length > 0, 'the simulated answer has text');
    });

    await check('responses.create stream, simulated provider', async () => {
        const events = await collect(await client.responses.create({ model: 'sim-chat', input: 'Say hello.', stream: true }));
        assert.ok(outputText(assertResponseStream(events)).length > 0, 'the simulated answer has text');
    });

    await check('embeddings.create through an openai provider (the SDK asks for base64)', async () => {
        const result = await client.embeddings.create({ model: 'fake-embed', input: 'hello' });
        assert.equal(result.data.length, 1);
        assert.deepEqual(result.data[0].embedding, fake.embedding);
        const sent = upstream.lastRequest('/v1/embeddings');
        assert.equal(sent.model, 'fake-embed-upstream');
        assert.equal(sent.encoding_format, 'base64');
    });

    await check('embeddings.create through an openai provider, floats, two inputs', async () => {
        const result = await client.embeddings.create({ model: 'fake-embed', input: ['a', 'b'], encoding_format: 'float' });
        assert.deepEqual(result.data.map((entry) => entry.index), [0, 1]);
        for (const entry of result.data)
            assert.deepEqual(entry.embedding, fake.embedding);
    });

    await check('embeddings.create on the simulated provider: 16 floats, deterministic', async () => {
        const first = await client.embeddings.create({ model: 'sim-embed', input: 'alpha' });
        const again = await client.embeddings.create({ model: 'sim-embed', input: 'alpha' });
        const other = await client.embeddings.create({ model: 'sim-embed', input: 'beta' });
        const vector = first.data[0].embedding;
        assert.equal(vector.length, 16);
        assert.ok(vector.every(Number.isFinite), `not all finite: ${vector}`);
        assert.deepEqual(again.data[0].embedding, vector, 'the same input gives the same vector');
        assert.notDeepEqual(other.data[0].embedding, vector, 'another input gives another vector');
    });

    await check('an unknown model: NotFoundError 404', async () => {
        await assert.rejects(client.embeddings.create({ model: 'no-such-model', input: 'x' }),
            (error) => assertNotServed(error, OpenAI.NotFoundError, 404, 'model_not_found'));
    });

    // A stream cut after its first text continues on the other provider: the SDK reads one
    // stream with the whole text, and the provider that continued was given the partial answer.
    await check('chat.completions.create stream cut mid-way, continued on another provider', async () => {
        const before = upstream.requests.length;
        const stream = await client.chat.completions.create({
            model: 'cut-chat', stream: true, messages: [{ role: 'user', content: 'Tell me about the fox.' }],
        });
        let text = '';
        const marked = [];
        const finishes = [];
        for await (const chunk of stream) {
            if (chunk.switchyard)
                marked.push({ before: text, note: chunk.switchyard });
            text += chunk.choices[0]?.delta?.content ?? '';
            if (chunk.choices[0]?.finish_reason)
                finishes.push(chunk.choices[0].finish_reason);
        }
        assert.equal(text, fake.cutText);
        assert.deepEqual(finishes, ['stop']);
        assert.equal(marked.length, 1, `marked chunks: ${JSON.stringify(marked)}`);
        assert.equal(marked[0].before, fake.cutText.slice(0, fake.cutAfter));
        assert.equal(marked[0].note.reason, 'upstream_stream_interrupted');
        assert.notEqual(marked[0].note.continued_from, marked[0].note.continued_on);
        const sent = upstream.requests.slice(before).map((request) => request.body);
        assert.equal(sent.length, 2);
        assert.equal(sent[1].continue_final_message, true);
        assert.equal(sent[1].add_generation_prompt, false);
        assert.deepEqual(sent[1].messages.at(-1), { role: 'assistant', content: fake.cutText.slice(0, fake.cutAfter) });
    });

    await check('responses.create stream cut mid-way, continued on another provider', async () => {
        const events = await collect(await client.responses.create({ model: 'cut-chat', input: 'Tell me about the fox.', stream: true }));
        assert.equal(outputText(assertResponseStream(events)), fake.cutText);
        const marked = events.filter((event) => event.switchyard);
        assert.equal(marked.length, 1);
        assert.equal(marked[0].type, 'response.output_text.delta');
    });

    await check('a chat model asked for embeddings: BadRequestError 400', async () => {
        await assert.rejects(client.embeddings.create({ model: 'fake-chat', input: 'x' }),
            (error) => assertNotServed(error, OpenAI.BadRequestError, 400, 'model_not_supported_on_endpoint'));
    });

    // The gateway's own stored and background responses, on a provider without the Responses
    // API: kept, run on its queue and answered under its ids, whatever the provider speaks.
    await check('responses.create background on a chat-only provider: queued, then completed', async () => {
        const queued = await client.responses.create({ model: 'fake-chat', input: 'Say hello.', background: true });
        assert.equal(queued.object, 'response');
        assert.match(queued.id, storedId);
        assert.equal(queued.status, 'queued', `the first answer: ${JSON.stringify(queued)}`);
        assert.equal(queued.background, true);
        const done = await finished(client, queued.id);
        assert.equal(done.id, queued.id);
        assert.equal(done.status, 'completed', `the retrieved response: ${JSON.stringify(done)}`);
        assert.equal(done.output_text, fake.chatText);
        assert.equal(done.background, true);
        const sent = upstream.lastRequest('/v1/chat/completions');
        assert.equal(sent.model, 'fake-chat-upstream');
        assert.equal(textOf(sent.messages.at(-1).content), 'Say hello.');
    });

    await check('responses.create background stream: left mid-answer, resumed with starting_after', async () => {
        // The provider holds the rest of the answer after its first word until the client has
        // left and come back: the task is certainly running through both.
        let release;
        upstream.slowGate = new Promise((resolve) => { release = resolve; });
        try {
            await leaveAndResume(release);
        } finally {
            release();
            upstream.slowGate = null;
        }
    });

    async function leaveAndResume(release) {
        const stream = await client.responses.create({
            model: 'slow-chat', input: 'Count to twelve.', background: true, stream: true,
        });
        const before = [];
        for await (const event of stream) {
            before.push(event);
            if (event.type === 'response.output_text.delta')
                break; // the SDK aborts the request: the client hangs up mid-answer
        }
        const types = before.map((event) => event.type).join(', ');
        assert.equal(before[0]?.type, 'response.created', `event types before leaving: ${types}`);
        const id = before[0].response.id;
        assert.match(id, storedId);
        assert.equal(before.at(-1).type, 'response.output_text.delta', `the stream ended before any text: ${types}`);
        assert.deepEqual(before.map((event) => event.sequence_number), before.map((_, index) => index),
            `sequence_number counts 0..N before leaving (${types})`);
        const last = before.at(-1).sequence_number;
        const meanwhile = await client.responses.retrieve(id);
        assert.equal(meanwhile.status, 'in_progress', `after the client left: ${JSON.stringify(meanwhile)}`);

        const resumed = await client.responses.retrieve(id, { stream: true, starting_after: last });
        release(); // the rest of the answer reaches a client that follows the running task
        const after = await collect(resumed);
        const afterTypes = after.map((event) => `${event.sequence_number}:${event.type}`).join(', ');
        assert.deepEqual(after.map((event) => event.sequence_number), after.map((_, index) => last + 1 + index),
            `every event after ${last} once, in order, without gaps: ${afterTypes}`);
        assert.equal(after.at(-1)?.type, 'response.completed', `the resumed stream: ${afterTypes}`);
        assert.ok(after.some((event) => event.type === 'response.output_text.delta'),
            `the resumed stream has the rest of the text: ${afterTypes}`);
        const deltas = [...before, ...after].filter((event) => event.type === 'response.output_text.delta')
            .map((event) => event.delta).join('');
        assert.equal(deltas, fake.slowText, 'the deltas of both halves add up to the whole answer');
        const final = after.at(-1).response;
        assert.equal(final.id, id);
        assert.equal(final.status, 'completed');
        assert.equal(outputText(final), fake.slowText);
        const retrieved = await client.responses.retrieve(id);
        assert.equal(retrieved.status, 'completed');
        assert.equal(retrieved.output_text, fake.slowText);
    }

    await check('responses.cancel on a running background response: cancelled, and it stays so', async () => {
        try {
            await cancelRunning();
        } finally {
            // Should the gateway not hang up, the task ends anyway: a failed one, not one that
            // holds Switchyard's shutdown.
            for (const held of upstream.held)
                held.response.destroy();
        }
    });

    async function cancelRunning() {
        const heldBefore = upstream.held.length;
        const queued = await client.responses.create({ model: 'held-chat', input: 'Take your time.', background: true });
        assert.match(queued.id, storedId);
        const held = await until('the held request to reach the fake upstream', () => upstream.held[heldBefore]);
        const running = await client.responses.retrieve(queued.id);
        assert.equal(running.status, 'in_progress', `the response while its provider holds the answer: ${JSON.stringify(running)}`);
        const cancelled = await client.responses.cancel(queued.id);
        assert.equal(cancelled.id, queued.id);
        assert.equal(cancelled.status, 'cancelled', `the cancel answer: ${JSON.stringify(cancelled)}`);
        await until('the gateway to hang up on the provider of the cancelled response', () => held.hungUp);
        const later = await client.responses.retrieve(queued.id);
        assert.equal(later.status, 'cancelled', `retrieved after the cancel: ${JSON.stringify(later)}`);
        assert.equal(later.output_text, '');
    }

    await check('responses.delete, then responses.retrieve: NotFoundError 404', async () => {
        const stored = await client.responses.create({ model: 'fake-chat', input: 'Say hello.', store: true });
        assert.match(stored.id, storedId);
        assert.equal((await client.responses.retrieve(stored.id)).output_text, fake.chatText, 'stored before the delete');
        await client.responses.delete(stored.id);
        await assert.rejects(client.responses.retrieve(stored.id),
            (error) => assertNotServed(error, OpenAI.NotFoundError, 404, 'response_not_found'));
    });

    await check('previous_response_id with a function tool on a chat-only provider', async () => {
        const question = 'What is the weather in Paris?';
        const first = await client.responses.create({ model: 'fake-chat', input: question, tools: [weatherTool], store: true });
        assert.match(first.id, storedId);
        assert.equal(first.store, true);
        const call = first.output.find((item) => item.type === 'function_call');
        assert.ok(call, `no function_call in the first turn's output: ${JSON.stringify(first.output)}`);
        const toolResult = '{"temperature_c":21}';
        const second = await client.responses.create({
            model: 'fake-chat',
            previous_response_id: first.id,
            tools: [weatherTool],
            input: [{ type: 'function_call_output', call_id: call.call_id, output: toolResult }],
        });
        const sent = upstream.lastRequest('/v1/chat/completions');
        const messages = sent.messages.map((message) => ({
            role: message.role,
            ...(message.role === 'assistant' ? {} : { content: textOf(message.content) }),
            ...(message.tool_calls ? { tool_calls: message.tool_calls } : {}),
            ...(message.tool_call_id ? { tool_call_id: message.tool_call_id } : {}),
        }));
        assert.deepEqual(messages, [
            { role: 'user', content: question },
            { role: 'assistant', tool_calls: [{ id: call.call_id, type: 'function', function: { name: 'get_weather', arguments: call.arguments } }] },
            { role: 'tool', content: toolResult, tool_call_id: call.call_id },
        ], `the chat messages the provider got for the second turn: ${JSON.stringify(sent.messages)}`);
        assert.ok(!textOf(sent.messages.find((message) => message.role === 'assistant').content),
            'the assistant turn carries no text besides its tool call');
        assert.equal(second.status, 'completed');
        assert.equal(second.output_text, `The tool get_weather answered ${toolResult}`);
        assert.equal(second.previous_response_id, first.id);
    });

    await check('responses.inputItems.list of a stored response', async () => {
        const input = [
            { role: 'developer', content: 'Answer in one line.' },
            { role: 'user', content: 'Say hello.' },
        ];
        const stored = await client.responses.create({ model: 'fake-chat', input, store: true });
        const described = (items) => items.map((item) => ({
            type: item.type, role: item.role, content: item.content.map((part) => ({ type: part.type, text: part.text })),
        }));
        const oldestFirst = await client.responses.inputItems.list(stored.id, { order: 'asc' });
        assert.deepEqual(described(oldestFirst.data), [
            { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Answer in one line.' }] },
            { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hello.' }] },
        ], `the items: ${JSON.stringify(oldestFirst.data)}`);
        for (const item of oldestFirst.data)
            assert.ok(typeof item.id === 'string' && item.id.length > 0, `an item without an id: ${JSON.stringify(item)}`);
        assert.equal(oldestFirst.has_more, false);
        const newestFirst = await client.responses.inputItems.list(stored.id); // the API's default order
        assert.deepEqual(newestFirst.data.map((item) => item.id), oldestFirst.data.map((item) => item.id).reverse());
        const listed = [];
        for await (const item of client.responses.inputItems.list(stored.id, { order: 'asc', limit: 1 }))
            listed.push(item.id);
        assert.deepEqual(listed, oldestFirst.data.map((item) => item.id), 'paged one by one with `after`');
    });
}

// --- Main ------------------------------------------------------------------------------------

const upstream = new FakeUpstream();

try {
    const port = await run.switchyard.start(writeConfig(run.directory, await upstream.start()));
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'test', maxRetries: 0, timeout: checkLimitMs });
    await runChecks(client, upstream);
    await check('switchyard exits 0 on SIGTERM', () => run.switchyard.stop());
} catch (error) {
    run.failEarly(run.describe(error));
} finally {
    upstream.stop();
}
run.finish();
