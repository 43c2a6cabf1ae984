<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="en_US">
<context>
    <name>AlertText</name>
    <message>
        <source>Tier success rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tier error rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tier p95 latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fail-safe answers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Budget used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Critical</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Warning</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tier %1</source>
        <extracomment>The subject of an alert: a tier by name, e.g. &quot;tier light&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>budget %1</source>
        <extracomment>The subject of an alert: a budget by name</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the gateway</source>
        <extracomment>The subject of the fail-safe alert: the whole gateway</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no data</source>
        <extracomment>An alert&apos;s value when there was too little traffic to compute it</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n answer(s)</source>
        <extracomment>A count of fail-safe answers</extracomment>
        <translation>
            <numerusform>%n answer</numerusform>
            <numerusform>%n answers</numerusform>
        </translation>
    </message>
    <message>
        <source>Severity</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Subject</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Value</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>CurlCommand</name>
    <message>
        <source># The request body was not kept, so this command has none. Set trace.keep_bodies: true in the configuration to keep bodies.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source># The body below was cut at the trace&apos;s body limit (trace.body_max_bytes); it is not the whole request.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>EndpointSummaryText</name>
    <message>
        <source>disabled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>draining</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>half-open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>degraded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>down</source>
        <extracomment>Breaker closed, yet kept out of traffic (failed health probes)</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2 up</source>
        <extracomment>%1 endpoints or nodes up; %2 how many there are</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>QueueText</name>
    <message>
        <source>&lt;1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <extracomment>minutes and seconds, e.g. &quot;3 min 4 s&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <extracomment>hours and minutes, e.g. &quot;2 h 5 min&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>queued</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>completed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>incomplete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>high</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>low</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>normal</source>
        <translation type="unfinished"></translation>
    </message>
</context>
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
    <name>switchyard::ui::ActiveAlertsModel</name>
    <message>
        <source>Threshold</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Since</source>
        <extracomment>When an alert&apos;s condition started to hold</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::AgentsModel</name>
    <message>
        <source>silent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>busy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>live</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n s ago</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Agent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>State</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Offers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last heartbeat</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::AgentsPanel</name>
    <message>
        <source>Registered agents</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No agent has registered. Agents register themselves with POST /admin/v1/agents and take requests that carry their intent.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deregister</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove the selected agent; it takes no more requests until it registers again</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::AlertBanner</name>
    <message>
        <source>%1 · %2</source>
        <extracomment>The banner&apos;s headline: an alert&apos;s rule and subject, e.g. &quot;Tier success rate · tier light&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 against %2, since %3</source>
        <extracomment>%1 the value now, %2 the threshold, %3 the time the condition started to hold</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n more alert(s) raised</source>
        <translation>
            <numerusform>%n more alert raised</numerusform>
            <numerusform>%n more alerts raised</numerusform>
        </translation>
    </message>
    <message>
        <source>View alerts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hide this banner until another alert is raised</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::AlertEventsModel</name>
    <message>
        <source>Raised</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cleared</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (threshold %2)</source>
        <extracomment>An event&apos;s value against its threshold, e.g. &quot;50.0 % (threshold 90.0 %)&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Event</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::AlertsPage</name>
    <message numerus="yes">
        <source>%n raised or cleared since the gateway started</source>
        <translation>
            <numerusform>%n raised or cleared since the gateway started</numerusform>
            <numerusform>%n raised or cleared since the gateway started</numerusform>
        </translation>
    </message>
    <message>
        <source>webhook: %1 delivered, %2 failed, %3 dropped, %4 waiting</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no webhook configured (alerts.webhook)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Active alerts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>An alert is raised once its rule&apos;s condition has held for the rule&apos;s duration, and cleared once it has not held for its clear_after. Rules are in the config&apos;s alerts section.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All clear: no alert is raised.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recent events</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::BackgroundTasksModel</name>
    <message>
        <source>Client key %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Started again after a restart: a task left running by a process that ended runs again under the same id.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Priority</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waited</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running for</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::BreakerEventsModel</name>
    <message>
        <source>Closed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Half-open</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <extracomment>A breaker transition, e.g. &quot;Closed → Open&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 at %2: %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Change</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reason</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::BreakerTimelinePanel</name>
    <message>
        <source>Breaker timeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Lanes</source>
        <extracomment>Switch of the breaker card: one lane per provider on a time axis</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Transitions</source>
        <extracomment>Switch of the breaker card: the table of breaker transitions, newest first</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>One lane per provider: breaker state over time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every breaker transition and operator action, newest first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No breaker has changed state yet. Trip a provider or start a drill to see its breaker open, probe and close here.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Live</source>
        <extracomment>The timeline follows the present; as a button, returns to it</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Following the present. Scroll to zoom, drag to look back.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Return to the present and follow it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>newest first</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>last %1</source>
        <extracomment>%1 is the span the timeline shows, e.g. &quot;last 5 min&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 shown, up to %2 ago</source>
        <extracomment>%1 is the span shown, %2 how far its right edge is behind the present</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Scroll to zoom around the pointer, drag to look back, double-click or press Live to return to the present.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::BreakerTimelineView</name>
    <message>
        <source>Closed</source>
        <extracomment>Circuit breaker state: traffic flows normally</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ramping</source>
        <extracomment>Breaker closed after a recovery, taking a growing share of traffic</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Half-open</source>
        <extracomment>Circuit breaker state: one probe call is let through</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open</source>
        <extracomment>Circuit breaker state: no traffic until the open period ends</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enabled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Disabled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Draining</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 min</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <extracomment>A duration in minutes and seconds, e.g. &quot;2 min 5 s&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 h</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <extracomment>A duration in hours and minutes, e.g. &quot;1 h 3 min&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <extracomment>A tooltip heading: provider and the time of an event, e.g. &quot;sim-swift · 12:01:03&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <extracomment>A breaker transition, e.g. &quot;Closed → Open&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Breaker %1, operator: %2</source>
        <extracomment>An event that left the breaker where it was: an operator action or probe health</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;Older history was dropped: the timeline keeps the last %2 and at most %3 changes per provider.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;No history before %2, when the console first saw it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Draining by an operator: no new requests</source>
        <extracomment>Operator state on the timeline, e.g. &quot;Disabled by an operator&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Disabled by an operator: no traffic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>since %1 (%2)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 – %2 (%3)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ramping: closed after a recovery, taking a growing share of traffic</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No providers yet. Each provider gets a lane here once the engine reports it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Transition</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Operator or probe</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>older history dropped</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::CanaryPanel</name>
    <message>
        <source>Canary splits</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No rule splits its traffic.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset to file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, by %2 (live weights)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1, by %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>live %1 % · file %2 %</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ConditionTreeEditor</name>
    <message>
        <source>all of the conditions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>any of the conditions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none of the conditions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Match</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&quot;None of the conditions&quot; matches a request that meets none of them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove this group and everything in it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add condition</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add group</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add a nested group, to mix &quot;all of&quot; and &quot;any of&quot; in one condition</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>value; for `in`: a, b, c</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove this condition</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ConfigPage</name>
    <message>
        <source>Roll back the config</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Roll back to version %1?

Its config becomes a new version, is applied at once (requests in flight finish as they started) and is written to the config file.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Config</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Versions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>select one to see what it changed, or two to compare</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Roll back to this version…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The engine runs without a config file: nothing is versioned.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version %1 is running. The file on disk was changed and refused at %2: fix it and save again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version %1 is running. Running config differs from the file %2.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version %1 is running. Running config differs from the file %2: the overlay %3 replaces %4, and a restart loads it too.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version %1 is running. The file %2 on disk matches it.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Versions are kept in memory only: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n version(s); select one to see what it changed, or two to compare</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Changes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no version selected</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version %1 → version %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>loading…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the same config</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n line(s) changed</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Rolling back to version %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rolled back: version %1 is running.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not rolled back: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>the first version, %n line(s)</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ConfigVersionsModel</name>
    <message>
        <source>file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>console</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>admin API</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rollback</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (running)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Source</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Author</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Note</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::DeadLettersModel</name>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Node</source>
        <extracomment>the fleet node that gave the task up</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dead-lettered at</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::DrillsPanel</name>
    <message>
        <source>Answer normally</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fail with HTTP 500</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rate-limit (HTTP 429)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Hang, never answer</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset the connection</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cut streams midway</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failover drills</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Make a simulated provider misbehave and watch its breaker</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Restore all</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Every simulated provider answers normally again, as configured</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Behaviour</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No simulated providers in this configuration. Drills act on the built-in simulated providers of the demo.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>As configured</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1%</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::DryRunPanel</name>
    <message>
        <source>not used</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>1, explicit hint</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>2, task tag</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>3, input tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>4, complexity score</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>5, default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>primary</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cross-tier failover</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>fallback chain</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>lighter model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dry run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sample</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Simple chat</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Code generation (pro)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sensitive data</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Long document</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Agent canary user</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request body</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Headers, one &quot;name: value&quot; per line</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Live rules</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>With your edits</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running...</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No decision: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rule: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>none matched</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tier: none (the rule pins the target)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tier: %1, cascade step %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Complexity score: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Canary side: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refused: no provider serves model %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Refused: no endpoint of the target can take the request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Candidates:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1. %2 (%3), score %4, %5</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Why:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Responses API request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Embeddings</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Endpoint</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rule: not used, %1 goes by model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tier: none (tiers are for chat)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>other split branch</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::FleetEndpointsModel</name>
    <message>
        <source>%1 does not list this endpoint</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (this node)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Endpoint</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::FleetNodesModel</name>
    <message>
        <source>%1 (this node)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not published yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>now</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n s ago</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Node</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Address</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Version</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Config</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In flight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Req/s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Endpoints</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last seen</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::FleetPage</name>
    <message>
        <source>The nodes sharing this node&apos;s Redis, as each last announced itself. They share the config, client keys, limits, budgets, agents and usage; each keeps its own breakers.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This gateway runs alone. Give each node a fleet section with one Redis to share the config, client keys, limits, budgets, agents and usage (docs/fleet.md).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Endpoints by node</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each node&apos;s view of each provider and agent. A breaker opened on one node stays that node&apos;s: the others keep calling while their own calls succeed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fleet %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fleet</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Redis %1 · %n live node(s)</source>
        <extracomment>%1 Redis address; %2 number of live nodes</extracomment>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>Redis %1 unreachable since %2: %3. This node serves from its own copies; the list shows the nodes as last seen.</source>
        <extracomment>%1 Redis address; %2 local time; %3 why</extracomment>
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
        <source>%1 (%2%)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Provider</source>
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
        <source>Calls sent to this provider and not yet answered</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Calls finished since start</source>
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
    <message>
        <source>Closed</source>
        <extracomment>Circuit breaker state: traffic flows normally</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Ramping</source>
        <extracomment>Recovered endpoint taking a growing share of traffic</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failing</source>
        <extracomment>Breaker still closed, but recent calls fail</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Half-open</source>
        <extracomment>Circuit breaker state: one probe call is let through</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Draining</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Open</source>
        <extracomment>Circuit breaker state: no traffic until the cool-down ends</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Disabled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <extracomment>Breaker state and time left until it lets a probe through, e.g. &quot;Open · 42 s&quot;
----------
Rate-limited provider and time left until it takes calls again, e.g. &quot;Cooling down · 2 s&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %2%</source>
        <extracomment>Recovery ramp with the share of traffic taken, e.g. &quot;Ramping 35%&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>disabled by an operator; takes no traffic until enabled</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>draining: no new requests, %n call(s) still open</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>%1; next probe in %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>letting one probe call through; %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>recovered; taking %1% of its usual share</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 (%2 provider)
Models: %3</source>
        <extracomment>Provider tooltip: id, kind, then the models it serves</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Breaker</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reason</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Circuit breaker state, or what an operator set; open breakers count down to their next probe</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Why the provider is in its state</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cooling down</source>
        <extracomment>The provider answered 429 (rate limited): no calls until its Retry-After passes</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rate limited by the provider (HTTP 429); no calls until its Retry-After has passed, its breaker untouched</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2 calls failed since start (%3%); %4% of recent calls failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed calls since start, and their share of all calls since start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not listed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No other node lists this provider yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Other nodes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>How the fleet&apos;s other nodes see this provider, as each last published it. Each node&apos;s breakers are its own and are never opened from here.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ImpactCellsModel</name>
    <message>
        <source>refused: unknown model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>refused: no endpoint can take it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no rule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unchanged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Live rules</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>With your edits</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Share</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ImpactExamplesModel</name>
    <message>
        <source>Request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>User</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Live rules</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>With your edits</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ImpactPanel</name>
    <message>
        <source>Impact preview</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Where the live requests of the last hour would go with your edits: each sampled request is routed again under the live rules and under yours.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Preview impact</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Sample requests of the selected row</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit the rules, then preview where recent traffic would go.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No preview: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>No live requests in the last %n minute(s) to replay.</source>
        <translation>
            <numerusform>No live requests in the last minute to replay.</numerusform>
            <numerusform>No live requests in the last %n minutes to replay.</numerusform>
        </translation>
    </message>
    <message>
        <source>Routing the sample under both rule sets...</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2 sampled requests would move (%3%4); %5 would now be refused.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The rules changed since this preview: preview again to see their effect.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Replayed: the sampled requests since %1.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The sample keeps up to %1 requests of the last %2 minutes, at most %3 a minute; now one request in %4.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The sample keeps up to %1 requests of the last %2 minutes, at most %3 a minute; now every request.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::IssueKeyDialog</name>
    <message>
        <source>Copied</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Issue a client key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests with the key belong to its tenant, within its limits. Its text is shown once, when it is issued.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>T&amp;enant:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>required, e.g. team-a</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Key &amp;id:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>optional; made up when empty</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Issue key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This is the only time the key is shown: Switchyard keeps only its SHA-256. Copy it now and hand it to its user; once this dialog is closed, a lost key can only be revoked and another issued.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Key %1 issued for tenant %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::KeyLimitsDialog</name>
    <message>
        <source>Edit the limits of key %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Key %1 of tenant %2. The new limits apply from its next request, on every node of a fleet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Save limits</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::KeyLimitsFields</name>
    <message>
        <source>&amp;Requests per minute:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Tokens per minute:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Input plus output tokens, counted when each request finishes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Models:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all models; or names and patterns, e.g. gpt-4o*, claude-*</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::KeysModel</name>
    <message>
        <source>Revoke it by removing it from auth.keys in the config file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoke it with DELETE /admin/v1/keys/%1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>config file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>admin API</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>no limit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>all models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Key</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Defined in</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests/min</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens/min</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Created</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::KeysPage</name>
    <message>
        <source>Client API keys</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No client keys: the gateway is open, and a request&apos;s tenant is what its x-switchyard-tenant header says.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Each request&apos;s tenant comes from its key. Keys are issued here, with POST /admin/v1/keys or in the config file (auth.keys); a key&apos;s secret is shown once, when it is issued, and never again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Issue key…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Edit limits…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoke…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Key %1 is defined in the config file: change or remove it under auth.keys there</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Key %1 issued.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Limits of key %1 saved.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoke key %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoke key %1 of tenant %2?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests with it are refused from now on (401), on every node of a fleet. This cannot be undone: the tenant needs a new key.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revoke</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Key %1 revoked.</source>
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
        <source>Starting the gateway…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Listening on %1  ·  OpenAI clients use http://%1/v1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Overview</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Routes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Traces</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>engine lag %1 ms  ·  %2 req/s</source>
        <extracomment>%1 how late the engine thread ran a due timer, in ms; %2 requests per second</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Engine lag: how late the engine thread ran a timer that was due, at the last tick. Every request is routed and relayed on that thread: more than a few milliseconds means requests wait for the gateway itself.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>OpenTelemetry export: %1 spans exported, %2 dropped (queue full), %3 given up, %4 failed exports, %5 queued</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Listening on %1  ·  OpenAI clients use https://%1/v1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>⚠ Open to the network without TLS</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Switchyard listens on %1, which other machines can reach, in plain HTTP: API keys, the admin token and prompts cross the network readable. Configure `tls` with a certificate and key, or listen on 127.0.0.1 behind a proxy that terminates TLS.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keys</source>
        <translation></translation>
    </message>
    <message>
        <source>Config</source>
        <translation></translation>
    </message>
    <message>
        <source>Usage</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Usage ledger not written</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Alerts (%1)</source>
        <extracomment>The Alerts tab; with alerts raised it says how many, e.g. &quot;Alerts (2)&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Alerts</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Fleet %1  ·  %n node(s)</source>
        <extracomment>The status bar of a node in a fleet: %1 the fleet&apos;s name, %n its live nodes</extracomment>
        <translation>
            <numerusform>Fleet %1  ·  %n node</numerusform>
            <numerusform>Fleet %1  ·  %n nodes</numerusform>
        </translation>
    </message>
    <message>
        <source>This node is %1 in fleet %2, sharing keys, limits and config through %3.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fleet link down since %1</source>
        <extracomment>%1 the local time the link to the fleet&apos;s Redis went down</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1
This node keeps serving from its own copy of the keys, limits and config; changes made here are sent when the link is back.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Fleet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Queue</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::OverviewPage</name>
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
        <source>Select a provider to act on it; right-click for the same actions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Enable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Disable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Let the selected provider take traffic again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Take the selected provider out of rotation now</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Drain</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stop new requests to the selected provider and let open streams finish</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Trip</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Force the selected provider&apos;s breaker open, as a drill</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Reset</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Close the selected provider&apos;s breaker and forget its failures</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>since start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 req/s</source>
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
        <source>open connections: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>open connections: %1 · refused: %2</source>
        <extracomment>%1 open client connections; %2 connections refused over the connection limits</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Client connections open: %1
Refused, limits.max_connections reached: %2
Refused, limits.max_connections_per_address reached: %3
Closed, request headers too slow: %4
Closed, request body too slow: %5
Closed, idle longer than limits.keep_alive_idle: %6</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Traffic by provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>calls/s · last 5 min</source>
        <extracomment>Calls the gateway started to each provider, per second</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Calls sent to each provider per second, over the last 5 s, counted when they start; retries and failovers count once per provider they reach.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>waiting to start: %1</source>
        <extracomment>Requests read during a burst, waiting for the engine to start them</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests in flight: %1, waiting to start: %2 (a burst&apos;s backlog, started in order within admission.max_start_wait)
</source>
        <extracomment>%1 requests in flight, %2 of them read and waiting for the engine to start them</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::QueueFailuresModel</name>
    <message>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Message</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Failed at</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::QueuePage</name>
    <message>
        <source>Background queue</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Responses requests with &quot;background&quot;: true wait here for a worker, then run like any other request. The same figures are served as GET /admin/v1/queue.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Queued</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finished since start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Stored responses</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Queued and running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No background task is queued or running. A client starts one with POST /v1/responses and &quot;background&quot;: true.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel task…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Recent failures</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The latest background tasks that failed, newest first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No background task has failed.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <extracomment>running tasks / workers, e.g. &quot;1 / 4&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>high %1 · normal %2 · low %3</source>
        <extracomment>queued tasks by priority, then how long the oldest has waited</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>oldest waited %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 completed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 failed · %2 cancelled · %3 timed out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 incomplete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Timed out tasks ran longer than responses.task_timeout; they count as failed too.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <extracomment>bytes stored of the most kept, e.g. &quot;12.3 KB of 256 MB&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Beyond responses.max_stored_bytes the oldest finished responses are dropped first.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Showing the first %1 of %2 tasks; GET /admin/v1/queue lists them all.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a queued or running task</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel task %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel background task %1 of tenant %2?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Its run is stopped as if its client had left; the client reads status &quot;cancelled&quot;. This cannot be undone.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>It never runs; the client reads status &quot;cancelled&quot;. This cannot be undone.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancel task</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Keep it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cancelling task %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task %1 cancelled.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tasks running / workers on this node</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dead letters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tasks of the fleet that failed on every run their delivery limit allows, or whose nodes kept stopping under them. Their clients read status &quot;failed&quot;. Retry queues one again with its runs counted from zero; Discard drops it from this list.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No task is in the dead letters.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Retry</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Discard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1: %2</source>
        <extracomment>a fleet node and the tasks it runs, e.g. &quot;gw-1: 2&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a dead letter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Queuing task %1 again…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Discarding task %1…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task %1 queued again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Task %1 discarded.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running on this node</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No background task runs on this node. The fleet&apos;s queue is summed up above.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>on this node · %1 in the fleet</source>
        <extracomment>%1: the background tasks running on all the fleet&apos;s nodes</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No task runs on any node of the fleet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Running per node: %1</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::RouteRulesModel</name>
    <message>
        <source>every request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>split by %1: %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>provider %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>pool %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tier %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Priority</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Rule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>When</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Target</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::RoutesView</name>
    <message>
        <source>Applying...</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Applied: new requests use these rules now.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Dry run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Impact preview</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::RuleEditorPanel</name>
    <message>
        <source>Edit rule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Name</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Priority</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Conditions (field, operator, value)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Target</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Canary split</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::RuleListPanel</name>
    <message>
        <source>Rules</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>In priority order: the first rule that matches a request wins.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add rule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Delete rule</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Revert</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Apply</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ShadowComparisonModel</name>
    <message>
        <source>%1 %</source>
        <extracomment>An error rate, e.g. &quot;2.5 %&quot;
----------
The shadow&apos;s figure relative to live&apos;s, e.g. &quot;+12 %&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ms</source>
        <extracomment>Milliseconds, e.g. &quot;840 ms&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Median latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error rate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens per request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Cost per request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 pts</source>
        <extracomment>A difference of two error rates in percentage points, e.g. &quot;+1.5 pts&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Live</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shadow</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Shadow vs live</source>
        <extracomment>Column header: the shadow&apos;s figure compared with live&apos;s</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ShadowPanel</name>
    <message>
        <source>Shadow traffic</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n finished request(s) came faster than the console refreshes and are not counted.</source>
        <translation>
            <numerusform>%n finished request came faster than the console refreshes and is not counted.</numerusform>
            <numerusform>%n finished requests came faster than the console refreshes and are not counted.</numerusform>
        </translation>
    </message>
    <message>
        <source>The route whose live requests and shadow calls are compared</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No shadow call has finished since the console opened. A rule with `shadow: {target, share}` also sends a share of its requests to another provider, to compare it with the live one; the client only ever gets the live answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 against %2, since the console opened</source>
        <extracomment>The providers compared, e.g. &quot;cloud-a against candidate, since the console opened&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::SplitEditor</name>
    <message>
        <source>Provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Pool</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>user</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tenant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>session</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Split by</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The request value that keeps a client on one side of the split; requests without it use their request id</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Branch target</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Weight</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Relative to the other branches; 0 sends this branch nothing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Remove this branch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Add branch</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %</source>
        <extracomment>A branch&apos;s share of the split&apos;s traffic, e.g. &quot;90 %&quot;</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::TopSpendersModel</name>
    <message numerus="yes">
        <source>%n request(s) with estimated tokens: the provider reported no usage</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>(no tenant)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <extracomment>input tokens → output tokens</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens in → out</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Estimated</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Spend</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 input tokens read from the prompt cache, %2 written to it</source>
        <extracomment>%1 input tokens read from the providers&apos; prompt caches; %2 written to them</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt-cache savings: %1
%2</source>
        <extracomment>%1 US dollars the prompt cache saved (negative: it cost more); %2 its reads and writes</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::TraceListModel</name>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last failed attempt: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rung %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The degradation ladder&apos;s rung that answered; a dash for the chosen model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time until the first streamed event went to the client</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Route</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tier</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Provider</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Attempts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Degraded</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TTFT</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request id</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Input tokens → output tokens, as the provider reported them; ≈ marks an estimate from the text when it reported none</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::TraceWaterfallView</name>
    <message>
        <source>attempt %1 · %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>success</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>failure</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>rate limited</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>unusable</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>request fault</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 µs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>HTTP %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 %2 — %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>at %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>for %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>still running</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 as %2: %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 bytes received</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n chunk(s) streamed, %1 bytes</source>
        <translation>
            <numerusform>%n chunk streamed, %1 bytes</numerusform>
            <numerusform>%n chunks streamed, %1 bytes</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>The first %n arrivals are drawn; later ones are only counted.</source>
        <translation>
            <numerusform>The first arrival is drawn; later ones are only counted.</numerusform>
            <numerusform>The first %n arrivals are drawn; later ones are only counted.</numerusform>
        </translation>
    </message>
    <message>
        <source>Gap between chunks: median %1, max %2</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>stream · %n chunk(s)</source>
        <translation>
            <numerusform>stream · %n chunk</numerusform>
            <numerusform>stream · %n chunks</numerusform>
        </translation>
    </message>
    <message>
        <source>stream · no chunks yet</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>not streamed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>wait</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>event</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>chunk</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>gaps: median %1 · max %2</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::TracesPage</name>
    <message>
        <source>Copied to the clipboard</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Requests</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Filter</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All statuses</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All providers</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All routes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>All tenants</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Errors only</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Slower than</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source> ms</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>any latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Show only requests that took longer than this; 0 shows all</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Search request id…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Jump to the top and show new requests as they arrive</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Select a request to see its waterfall, the routing decision and its text as it streams.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waterfall · ms from the request&apos;s start</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Routing decision</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Live text</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Request</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Response</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy as curl</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Copy a curl command that sends this request to the gateway again; the API key is left as $OPENAI_API_KEY</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No text yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>↑ %n new</source>
        <translation>
            <numerusform>↑ %n new</numerusform>
            <numerusform>↑ %n new</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 shown · %2 running · the list keeps the newest %3</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 older let go</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>paused while you look</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>route %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>default</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>tenant %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 so far</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 in all</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>TTFT %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 → %2 tokens</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>the engine no longer keeps this trace</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Deciding…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>No routing decision: the request ended before one was made.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Waiting for the first chunk…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Not streamed: the answer arrives whole.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The answer had no text.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The answer&apos;s text was not kept. Select a request while it streams to watch its text, or set trace.keep_bodies: true to keep every answer.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Error the client saw: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Finished: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>Streaming · %n event(s) so far</source>
        <translation>
            <numerusform>Streaming · %n event so far</numerusform>
            <numerusform>Streaming · %n events so far</numerusform>
        </translation>
    </message>
    <message>
        <source>text since you selected it</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Bodies are not kept for this request. Set trace.keep_bodies: true in the configuration to keep request and response bodies (up to trace.body_max_bytes each) in new traces.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(cut at the trace&apos;s body limit)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The response is kept when the request finishes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>key %1</source>
        <extracomment>%1 the id of the client API key that authenticated the request</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cost %1</source>
        <extracomment>%1 what the request cost, in US dollars</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 cached, %2 written to the cache</source>
        <extracomment>%1 input tokens read from the provider&apos;s prompt cache; %2 written to it</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 cached</source>
        <extracomment>%1 input tokens read from the provider&apos;s prompt cache</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cost %1, saved %2</source>
        <extracomment>%1 what the request cost; %2 what the prompt cache saved, both in US dollars</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>cost %1, %2 more for cache writes</source>
        <extracomment>%1 what the request cost; %2 what writing the prompt cache cost beyond what reading it saved, both in US dollars</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>response cache hit, saved %1</source>
        <extracomment>%1 what the kept answer cost when a provider made it, in US dollars</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>switchyard::ui::UsagePage</name>
    <message>
        <source>Usage and cost</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;Range</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Today</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last 7 days</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Last 30 days</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&amp;By</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Top spenders today</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Budgets</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no tenant)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>(no model)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Other</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>per hour, UTC</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>per day, UTC</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Spend (USD) %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tokens (input + output) %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%2 → %3 tokens&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%4 requests&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%5 estimated</source>
        <extracomment>%1 spend; %2 input tokens; %3 output tokens; %4 requests; %5 share of estimated requests</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message numerus="yes">
        <source>%n request(s) in this range used a model without a price in `pricing`: they count as free.</source>
        <translation type="unfinished">
            <numerusform></numerusform>
            <numerusform></numerusform>
        </translation>
    </message>
    <message>
        <source>None configured: add `budgets` to the config to refuse a tenant or key that has spent its day&apos;s or month&apos;s limit.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Spend per UTC day or month; a budget used up refuses its tenant or key with 429 until it resets.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>today</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>this month</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; %2: %3 of %4 (%5)</source>
        <extracomment>%1 budget name; %2 &quot;today&quot; or &quot;this month&quot;; %3 spent; %4 limit; %5 used share</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Resets at %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The usage ledger is written again.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The usage ledger cannot be written: %1. Traffic is served; %2 row(s) wait in memory (at most %3) and writing is retried.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>%1 row(s) were dropped beyond that limit and are lost.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt-cache savings: &lt;b&gt;%1&lt;/b&gt;, as cache writes cost more than the reads saved&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%2</source>
        <extracomment>%1 a negative amount of US dollars; %2 the prompt cache&apos;s reads and writes</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt-cache savings: &lt;b&gt;%1&lt;/b&gt;&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%2</source>
        <extracomment>%1 US dollars; %2 the prompt cache&apos;s reads and writes</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Prompt-cache savings: what the input tokens read from or written to a provider&apos;s cache would have cost at the input price, less what they cost. A model without `cache_read_per_million` or `cache_write_per_million` in `pricing` claims none.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Tenants by spend since 00:00 UTC. &quot;Estimated&quot; is the share of requests whose tokens the provider did not report; a spend&apos;s tooltip gives what the prompt cache saved.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>This node only: %1</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>The whole fleet: this node and %1</source>
        <extracomment>%1 the names of the fleet&apos;s other nodes, comma-separated</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Response-cache savings: &lt;b&gt;%1&lt;/b&gt;&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;hit ratio %2 (%3 of %4 lookups)</source>
        <extracomment>%1 US dollars; %2 a percentage; %3 requests answered from the cache; %4 looked up</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <source>Response-cache savings: what the answers given again from the response cache cost when a provider made them. A hit calls no provider and costs nothing; the hit ratio counts the requests on routes and models with `cache:` that were looked up.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
