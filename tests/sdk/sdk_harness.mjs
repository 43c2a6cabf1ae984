// What every official-SDK check shares: the shipped binary from the command line, the pinned SDK
// verified, Switchyard started headless on a free port and stopped with SIGTERM, and checks run
// one by one with a time limit, printing one line each and `N passed, N failed`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const sdkDirectory = path.dirname(fileURLToPath(import.meta.url));
// ctest's own timeout is longer: these still stop Switchyard and say which check hung.
export const wholeRunLimitMs = 150_000;
export const checkLimitMs = 20_000;

export const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// One run of a check script: `name` prefixes its fatal messages.
export class SdkRun {
    passed = 0;
    failed = 0;
    #name;
    #describe = (error) => String(error?.message ?? error);

    constructor(name) {
        this.#name = name;
        this.binary = process.argv[2];
        if (!this.binary || !fs.existsSync(this.binary))
            this.failEarly(`usage: node ${name}.mjs PATH/TO/switchyard (got ${this.binary ?? 'nothing'})`);
        this.directory = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-sdk-'));
        this.switchyard = new Switchyard(this.binary);
        process.on('exit', () => {
            this.switchyard.kill();
            fs.rmSync(this.directory, { recursive: true, force: true });
        });
        setTimeout(() => this.failEarly(`gave up after ${wholeRunLimitMs / 1000} s`), wholeRunLimitMs).unref();
    }

    failEarly(message) {
        console.error(`${this.#name}: ${message}`);
        process.exit(1);
    }

    // How a failure reads: the SDK's error classes say more than their message alone.
    describeErrorsWith(describe) {
        this.#describe = describe;
    }

    describe(error) {
        return this.#describe(error);
    }

    // The SDK that npm ci installed must be the one package.json pins, or the checks prove nothing.
    installedSdk(packageName) {
        const pinned = JSON.parse(fs.readFileSync(path.join(sdkDirectory, 'package.json'), 'utf8'))
            .dependencies[packageName];
        const installedFile = path.join(sdkDirectory, 'node_modules', ...packageName.split('/'), 'package.json');
        if (!fs.existsSync(installedFile))
            this.failEarly(`the ${packageName} SDK is not installed in ${sdkDirectory}/node_modules: run \`npm ci\` there`);
        const installed = JSON.parse(fs.readFileSync(installedFile, 'utf8')).version;
        if (installed !== pinned)
            this.failEarly(`node_modules holds ${packageName} ${installed} but package.json pins ${pinned}: run \`npm ci\``);
        return installed;
    }

    async check(name, body) {
        let timer;
        const limit = new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`no result within ${checkLimitMs / 1000} s`)), checkLimitMs);
        });
        try {
            await Promise.race([body(), limit]);
            this.passed += 1;
            console.log(`ok   ${name}`);
        } catch (error) {
            this.failed += 1;
            console.log(`FAIL ${name}\n     ${this.describe(error).replaceAll('\n', '\n     ')}`);
        } finally {
            clearTimeout(timer);
        }
    }

    finish() {
        console.log(`${this.passed} passed, ${this.failed} failed`);
        process.exit(this.failed === 0 ? 0 : 1);
    }
}

// The shipped binary, headless, on a port of its own choosing.
export class Switchyard {
    #binary;
    #child;
    #stderr = '';
    #exit;

    constructor(binary) {
        this.#binary = binary;
    }

    // Resolves to the port once Switchyard says where it listens; `environment` is added to ours.
    start(configFile, environment = {}) {
        this.#child = spawn(this.#binary, ['--headless', '--config', configFile, '--listen', '127.0.0.1:0'], {
            stdio: ['ignore', 'pipe', 'pipe'],
            env: { ...process.env, ...environment },
        });
        this.#exit = new Promise((resolve) => this.#child.once('exit', (code, signal) => resolve({ code, signal })));
        // Kept for the failure message; the tail is what says why it stopped.
        this.#child.stderr.on('data', (chunk) => { this.#stderr = (this.#stderr + chunk).slice(-4000); });
        let stdout = '';
        return new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(
                `no "OpenAI base URL" line on stdout within 30 s; stdout: ${stdout}\nstderr: ${this.#stderr}`)), 30_000);
            this.#child.stdout.on('data', (chunk) => {
                stdout += chunk;
                const match = /OpenAI base URL http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(stdout);
                if (match) {
                    clearTimeout(timer);
                    resolve(Number(match[1]));
                }
            });
            this.#child.once('error', (error) => { clearTimeout(timer); reject(error); });
            this.#exit.then(({ code, signal }) => {
                clearTimeout(timer);
                reject(new Error(`switchyard exited (code ${code}, signal ${signal}) before it listened:\n${this.#stderr}`));
            });
        });
    }

    async stop() {
        this.#child.kill('SIGTERM');
        const stopped = await Promise.race([this.#exit, pause(30_000).then(() => null)]);
        assert.ok(stopped, 'switchyard did not exit within 30 s of SIGTERM');
        assert.deepEqual(stopped, { code: 0, signal: null }, `switchyard's exit after SIGTERM; stderr:\n${this.#stderr}`);
    }

    kill() {
        if (this.#child && this.#child.exitCode === null && this.#child.signalCode === null)
            this.#child.kill('SIGKILL');
    }
}

// An HTTP server on a free loopback port, for a fake provider; `handler` takes each request.
export class LoopbackServer {
    #server;

    constructor(handler) {
        this.#server = http.createServer(handler);
    }

    // Resolves to the base URL a provider entry names: http://127.0.0.1:PORT/v1.
    async start() {
        this.#server.listen(0, '127.0.0.1');
        await new Promise((resolve) => this.#server.once('listening', resolve));
        return `http://127.0.0.1:${this.#server.address().port}/v1`;
    }

    stop() {
        this.#server.closeAllConnections?.();
        this.#server.close();
    }
}
