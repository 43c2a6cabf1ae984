<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>main</name>
    <message>
        <source>Switchyard cannot start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Switchyard did not start.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The configuration has errors:</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::HealthMatrixModel</name>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Degraded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Down</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2 provider)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 failed calls since start; %2% of recent calls failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>State</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In flight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Errors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>p50 latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>p95 latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TTFT p50</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Provider id from the configuration</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Health as judged from recent calls; hover a row for the reason</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Calls sent to this provider and not yet answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Calls finished since start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed calls since start, and the failure rate over recent calls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Median time to a complete answer over recent calls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>95th percentile time to a complete answer over recent calls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Median time to first token of streamed answers over recent calls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models this provider serves</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n consecutive call failure(s); last: %1</source>
        <translation>
            <numerusform>%n consecutive call failure; last: %1</numerusform>
            <numerusform>%n consecutive call failures; last: %1</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>%1% of the last %n call(s) failed</source>
        <translation>
            <numerusform>%1% of the last call failed</numerusform>
            <numerusform>%1% of the last %n calls failed</numerusform>
        </translation>
    </message>
    <message>
        <source>no calls yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>answering normally</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::MainWindow</name>
    <message>
        <source>Switchyard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Controls</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Gateway console</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Demo traffic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Send simulated client requests through the gateway, mixed streamed and not</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> req/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Demo traffic rate, in requests per second</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Total requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In flight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Providers up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests per second</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>last 60 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Providers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hover a state for its reason; click a header to sort</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>since start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>demo traffic at %1 req/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>client requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>across all providers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <extracomment>Providers that are up, out of all providers, e.g. &quot;2 / 3&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no providers configured</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all healthy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 degraded, %2 down</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Starting the gateway…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Listening on %1  ·  OpenAI clients use http://%1/v1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 req/s</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
