<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AlertText</name>
    <message>
        <source>Tier success rate</source>
        <translation>档位成功率</translation>
    </message>
    <message>
        <source>Tier error rate</source>
        <translation>档位错误率</translation>
    </message>
    <message>
        <source>Tier p95 latency</source>
        <translation>档位 p95 延迟</translation>
    </message>
    <message>
        <source>Fail-safe answers</source>
        <translation>兜底应答</translation>
    </message>
    <message>
        <source>Budget used</source>
        <translation>预算用量</translation>
    </message>
    <message>
        <source>Critical</source>
        <translation>严重</translation>
    </message>
    <message>
        <source>Warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>tier %1</source>
        <extracomment>The subject of an alert: a tier by name, e.g. &quot;tier light&quot;</extracomment>
        <translation>档位 %1</translation>
    </message>
    <message>
        <source>budget %1</source>
        <extracomment>The subject of an alert: a budget by name</extracomment>
        <translation>预算 %1</translation>
    </message>
    <message>
        <source>the gateway</source>
        <extracomment>The subject of the fail-safe alert: the whole gateway</extracomment>
        <translation>网关</translation>
    </message>
    <message>
        <source>no data</source>
        <extracomment>An alert&apos;s value when there was too little traffic to compute it</extracomment>
        <translation>无数据</translation>
    </message>
    <message>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message numerus="yes">
        <source>%n answer(s)</source>
        <extracomment>A count of fail-safe answers</extracomment>
        <translation>
            <numerusform>%n 次应答</numerusform>
        </translation>
    </message>
    <message>
        <source>Severity</source>
        <translation>级别</translation>
    </message>
    <message>
        <source>Rule</source>
        <translation>规则</translation>
    </message>
    <message>
        <source>Subject</source>
        <translation>对象</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>数值</translation>
    </message>
</context>
<context>
    <name>CurlCommand</name>
    <message>
        <source># The request body was not kept, so this command has none. Set trace.keep_bodies: true in the configuration to keep bodies.</source>
        <translation># 未保留请求正文，因此此命令不含正文。在配置中设置 trace.keep_bodies: true 即可保留正文。</translation>
    </message>
    <message>
        <source># The body below was cut at the trace&apos;s body limit (trace.body_max_bytes); it is not the whole request.</source>
        <translation># 以下正文已按追踪的正文上限（trace.body_max_bytes）截断，并非完整请求。</translation>
    </message>
</context>
<context>
    <name>EndpointSummaryText</name>
    <message>
        <source>disabled</source>
        <translation>已停用</translation>
    </message>
    <message>
        <source>draining</source>
        <translation>排空中</translation>
    </message>
    <message>
        <source>open</source>
        <translation>断开</translation>
    </message>
    <message>
        <source>half-open</source>
        <translation>半开</translation>
    </message>
    <message>
        <source>up</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>degraded</source>
        <translation>降级</translation>
    </message>
    <message>
        <source>down</source>
        <extracomment>Breaker closed, yet kept out of traffic (failed health probes)</extracomment>
        <translation>不可用</translation>
    </message>
    <message>
        <source>%1 of %2 up</source>
        <extracomment>%1 endpoints or nodes up; %2 how many there are</extracomment>
        <translation>%2 个中 %1 个正常</translation>
    </message>
</context>
<context>
    <name>QueueText</name>
    <message>
        <source>&lt;1 s</source>
        <translation>&lt;1 秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <extracomment>minutes and seconds, e.g. &quot;3 min 4 s&quot;</extracomment>
        <translation>%1 分 %2 秒</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <extracomment>hours and minutes, e.g. &quot;2 h 5 min&quot;</extracomment>
        <translation>%1 小时 %2 分</translation>
    </message>
    <message>
        <source>queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>completed</source>
        <translation>已完成</translation>
    </message>
    <message>
        <source>incomplete</source>
        <translation>未完成</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>high</source>
        <translation>高</translation>
    </message>
    <message>
        <source>low</source>
        <translation>低</translation>
    </message>
    <message>
        <source>normal</source>
        <translation>普通</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>Switchyard cannot start</source>
        <translation>Switchyard 无法启动</translation>
    </message>
    <message>
        <source>Switchyard did not start.</source>
        <translation>Switchyard 未能启动。</translation>
    </message>
    <message>
        <source>The configuration has errors:</source>
        <translation>配置文件有错误：</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ActiveAlertsModel</name>
    <message>
        <source>Threshold</source>
        <translation>阈值</translation>
    </message>
    <message>
        <source>Since</source>
        <extracomment>When an alert&apos;s condition started to hold</extracomment>
        <translation>起始于</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::AgentsModel</name>
    <message>
        <source>silent</source>
        <translation>失联</translation>
    </message>
    <message>
        <source>busy</source>
        <translation>忙碌</translation>
    </message>
    <message>
        <source>live</source>
        <translation>在线</translation>
    </message>
    <message numerus="yes">
        <source>%n s ago</source>
        <translation>
            <numerusform>%n 秒前</numerusform>
        </translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Offers</source>
        <translation>提供能力</translation>
    </message>
    <message>
        <source>Last heartbeat</source>
        <translation>上次心跳</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::AgentsPanel</name>
    <message>
        <source>Registered agents</source>
        <translation>已注册的智能体</translation>
    </message>
    <message>
        <source>No agent has registered. Agents register themselves with POST /admin/v1/agents and take requests that carry their intent.</source>
        <translation>还没有智能体注册。智能体通过 POST /admin/v1/agents 自行注册，并接收带有其意图的请求。</translation>
    </message>
    <message>
        <source>Deregister</source>
        <translation>注销</translation>
    </message>
    <message>
        <source>Remove the selected agent; it takes no more requests until it registers again</source>
        <translation>移除所选智能体；在它重新注册之前不再接收请求</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::AlertBanner</name>
    <message>
        <source>%1 · %2</source>
        <extracomment>The banner&apos;s headline: an alert&apos;s rule and subject, e.g. &quot;Tier success rate · tier light&quot;</extracomment>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>%1 against %2, since %3</source>
        <extracomment>%1 the value now, %2 the threshold, %3 the time the condition started to hold</extracomment>
        <translation>%1，阈值 %2，自 %3 起</translation>
    </message>
    <message numerus="yes">
        <source>%n more alert(s) raised</source>
        <translation>
            <numerusform>另有 %n 条告警</numerusform>
        </translation>
    </message>
    <message>
        <source>View alerts</source>
        <translation>查看告警</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>忽略</translation>
    </message>
    <message>
        <source>Hide this banner until another alert is raised</source>
        <translation>隐藏此横幅，直到有新的告警触发</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::AlertEventsModel</name>
    <message>
        <source>Raised</source>
        <translation>触发</translation>
    </message>
    <message>
        <source>Cleared</source>
        <translation>解除</translation>
    </message>
    <message>
        <source>%1 (threshold %2)</source>
        <extracomment>An event&apos;s value against its threshold, e.g. &quot;50.0 % (threshold 90.0 %)&quot;</extracomment>
        <translation>%1（阈值 %2）</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Event</source>
        <translation>事件</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::AlertsPage</name>
    <message numerus="yes">
        <source>%n raised or cleared since the gateway started</source>
        <translation>
            <numerusform>网关启动以来共 %n 次触发或解除</numerusform>
        </translation>
    </message>
    <message>
        <source>webhook: %1 delivered, %2 failed, %3 dropped, %4 waiting</source>
        <translation>Webhook：已送达 %1，失败 %2，丢弃 %3，等待 %4</translation>
    </message>
    <message>
        <source>no webhook configured (alerts.webhook)</source>
        <translation>未配置 Webhook（alerts.webhook）</translation>
    </message>
    <message>
        <source>Active alerts</source>
        <translation>当前告警</translation>
    </message>
    <message>
        <source>An alert is raised once its rule&apos;s condition has held for the rule&apos;s duration, and cleared once it has not held for its clear_after. Rules are in the config&apos;s alerts section.</source>
        <translation>规则条件持续满足设定时长后触发告警，条件在 clear_after 时长内不再满足后解除。规则位于配置的 alerts 部分。</translation>
    </message>
    <message>
        <source>All clear: no alert is raised.</source>
        <translation>一切正常：当前没有告警。</translation>
    </message>
    <message>
        <source>Recent events</source>
        <translation>最近事件</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::BackgroundTasksModel</name>
    <message>
        <source>Client key %1</source>
        <translation>客户端密钥 %1</translation>
    </message>
    <message>
        <source>Started again after a restart: a task left running by a process that ended runs again under the same id.</source>
        <translation>重启后再次启动：已结束的进程留下的运行中任务会以同一 ID 再次运行。</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Priority</source>
        <translation>优先级</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Waited</source>
        <translation>已等待</translation>
    </message>
    <message>
        <source>Running for</source>
        <translation>已运行</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行次数</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::BreakerEventsModel</name>
    <message>
        <source>Closed</source>
        <translation>闭合</translation>
    </message>
    <message>
        <source>Open</source>
        <translation>断开</translation>
    </message>
    <message>
        <source>Half-open</source>
        <translation>半开</translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <extracomment>A breaker transition, e.g. &quot;Closed → Open&quot;</extracomment>
        <translation>%1 → %2</translation>
    </message>
    <message>
        <source>%1 at %2: %3</source>
        <translation>%1 于 %2：%3</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>提供商</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>状态变化</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::BreakerTimelinePanel</name>
    <message>
        <source>Breaker timeline</source>
        <translation>熔断器时间线</translation>
    </message>
    <message>
        <source>Lanes</source>
        <extracomment>Switch of the breaker card: one lane per provider on a time axis</extracomment>
        <translation>泳道</translation>
    </message>
    <message>
        <source>Transitions</source>
        <extracomment>Switch of the breaker card: the table of breaker transitions, newest first</extracomment>
        <translation>状态转换</translation>
    </message>
    <message>
        <source>One lane per provider: breaker state over time</source>
        <translation>每个提供商一条泳道：熔断器状态随时间的变化</translation>
    </message>
    <message>
        <source>Every breaker transition and operator action, newest first</source>
        <translation>每一次熔断器状态转换和操作员操作，最新的在前</translation>
    </message>
    <message>
        <source>No breaker has changed state yet. Trip a provider or start a drill to see its breaker open, probe and close here.</source>
        <translation>尚无熔断器改变状态。熔断一个提供商或开始一次演练，即可在此看到其熔断器断开、探测和闭合。</translation>
    </message>
    <message>
        <source>Live</source>
        <extracomment>The timeline follows the present; as a button, returns to it</extracomment>
        <translation>实时</translation>
    </message>
    <message>
        <source>Following the present. Scroll to zoom, drag to look back.</source>
        <translation>正在跟随当前时间。滚动滚轮缩放，拖动查看过去。</translation>
    </message>
    <message>
        <source>Return to the present and follow it</source>
        <translation>回到当前时间并持续跟随</translation>
    </message>
    <message>
        <source>newest first</source>
        <translation>最新的在前</translation>
    </message>
    <message>
        <source>last %1</source>
        <extracomment>%1 is the span the timeline shows, e.g. &quot;last 5 min&quot;</extracomment>
        <translation>最近 %1</translation>
    </message>
    <message>
        <source>%1 shown, up to %2 ago</source>
        <extracomment>%1 is the span shown, %2 how far its right edge is behind the present</extracomment>
        <translation>显示 %1，截至 %2 前</translation>
    </message>
    <message>
        <source>Scroll to zoom around the pointer, drag to look back, double-click or press Live to return to the present.</source>
        <translation>滚动滚轮以指针处为中心缩放，拖动查看过去，双击或按“实时”回到当前时间。</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::BreakerTimelineView</name>
    <message>
        <source>Closed</source>
        <extracomment>Circuit breaker state: traffic flows normally</extracomment>
        <translation>闭合</translation>
    </message>
    <message>
        <source>Ramping</source>
        <extracomment>Breaker closed after a recovery, taking a growing share of traffic</extracomment>
        <translation>恢复中</translation>
    </message>
    <message>
        <source>Half-open</source>
        <extracomment>Circuit breaker state: one probe call is let through</extracomment>
        <translation>半开</translation>
    </message>
    <message>
        <source>Open</source>
        <extracomment>Circuit breaker state: no traffic until the open period ends</extracomment>
        <translation>断开</translation>
    </message>
    <message>
        <source>Enabled</source>
        <translation>已启用</translation>
    </message>
    <message>
        <source>Disabled</source>
        <translation>已停用</translation>
    </message>
    <message>
        <source>Draining</source>
        <translation>排空中</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 min</source>
        <translation>%1 分钟</translation>
    </message>
    <message>
        <source>%1 min %2 s</source>
        <extracomment>A duration in minutes and seconds, e.g. &quot;2 min 5 s&quot;</extracomment>
        <translation>%1 分 %2 秒</translation>
    </message>
    <message>
        <source>%1 h</source>
        <translation>%1 小时</translation>
    </message>
    <message>
        <source>%1 h %2 min</source>
        <extracomment>A duration in hours and minutes, e.g. &quot;1 h 3 min&quot;</extracomment>
        <translation>%1 小时 %2 分</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <extracomment>A tooltip heading: provider and the time of an event, e.g. &quot;sim-swift · 12:01:03&quot;</extracomment>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <extracomment>A breaker transition, e.g. &quot;Closed → Open&quot;</extracomment>
        <translation>%1 → %2</translation>
    </message>
    <message>
        <source>Breaker %1, operator: %2</source>
        <extracomment>An event that left the breaker where it was: an operator action or probe health</extracomment>
        <translation>熔断器%1，操作员设置：%2</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;Older history was dropped: the timeline keeps the last %2 and at most %3 changes per provider.</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;更早的历史已丢弃：时间线只保留最近 %2，且每个提供商最多 %3 次变化。</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;No history before %2, when the console first saw it.</source>
        <translation>&lt;b&gt;%1&lt;/b&gt;&lt;br&gt;%2 之前没有历史：控制台从那时起才看到它。</translation>
    </message>
    <message>
        <source>Draining by an operator: no new requests</source>
        <extracomment>Operator state on the timeline, e.g. &quot;Disabled by an operator&quot;</extracomment>
        <translation>操作员正在排空：不接收新请求</translation>
    </message>
    <message>
        <source>Disabled by an operator: no traffic</source>
        <translation>已被操作员停用：不接收流量</translation>
    </message>
    <message>
        <source>since %1 (%2)</source>
        <translation>自 %1 起（%2）</translation>
    </message>
    <message>
        <source>%1 – %2 (%3)</source>
        <translation>%1 – %2（%3）</translation>
    </message>
    <message>
        <source>Ramping: closed after a recovery, taking a growing share of traffic</source>
        <translation>恢复中：恢复后已闭合，承担的流量份额逐步增加</translation>
    </message>
    <message>
        <source>No providers yet. Each provider gets a lane here once the engine reports it.</source>
        <translation>尚无提供商。引擎报告某个提供商后，它会在这里获得一条泳道。</translation>
    </message>
    <message>
        <source>Transition</source>
        <translation>状态转换</translation>
    </message>
    <message>
        <source>Operator or probe</source>
        <translation>操作员或探测</translation>
    </message>
    <message>
        <source>older history dropped</source>
        <translation>更早的历史已丢弃</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::CanaryPanel</name>
    <message>
        <source>Canary splits</source>
        <translation>金丝雀分流</translation>
    </message>
    <message>
        <source>No rule splits its traffic.</source>
        <translation>没有规则对其流量分流。</translation>
    </message>
    <message>
        <source>Reset to file</source>
        <translation>重置为文件配置</translation>
    </message>
    <message>
        <source>%1, by %2 (live weights)</source>
        <translation>%1，按 %2（生效权重）</translation>
    </message>
    <message>
        <source>%1, by %2</source>
        <translation>%1，按 %2</translation>
    </message>
    <message>
        <source>live %1 % · file %2 %</source>
        <translation>生效 %1 % · 文件 %2 %</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ConditionTreeEditor</name>
    <message>
        <source>all of the conditions</source>
        <translation>全部条件</translation>
    </message>
    <message>
        <source>any of the conditions</source>
        <translation>任一条件</translation>
    </message>
    <message>
        <source>none of the conditions</source>
        <translation>无一条件</translation>
    </message>
    <message>
        <source>Match</source>
        <translation>匹配</translation>
    </message>
    <message>
        <source>&quot;None of the conditions&quot; matches a request that meets none of them</source>
        <translation>“无一条件”匹配其中任何条件都不满足的请求</translation>
    </message>
    <message>
        <source>Remove this group and everything in it</source>
        <translation>删除此条件组及其中的全部内容</translation>
    </message>
    <message>
        <source>Add condition</source>
        <translation>添加条件</translation>
    </message>
    <message>
        <source>Add group</source>
        <translation>添加条件组</translation>
    </message>
    <message>
        <source>Add a nested group, to mix &quot;all of&quot; and &quot;any of&quot; in one condition</source>
        <translation>添加嵌套条件组，以便在一个条件中组合“全部条件”与“任一条件”</translation>
    </message>
    <message>
        <source>value; for `in`: a, b, c</source>
        <translation>值；`in` 用：a, b, c</translation>
    </message>
    <message>
        <source>Remove this condition</source>
        <translation>移除此条件</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ConfigPage</name>
    <message>
        <source>Roll back the config</source>
        <translation>回滚配置</translation>
    </message>
    <message>
        <source>Roll back to version %1?

Its config becomes a new version, is applied at once (requests in flight finish as they started) and is written to the config file.</source>
        <translation>回滚到版本 %1？

它的配置将成为一个新版本，立即生效（进行中的请求按开始时的配置完成），并写入配置文件。</translation>
    </message>
    <message>
        <source>Config</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Versions</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>select one to see what it changed, or two to compare</source>
        <translation>选择一个查看其改动，或选择两个进行比较</translation>
    </message>
    <message>
        <source>Roll back to this version…</source>
        <translation>回滚到此版本…</translation>
    </message>
    <message>
        <source>The engine runs without a config file: nothing is versioned.</source>
        <translation>引擎未使用配置文件运行：没有版本记录。</translation>
    </message>
    <message>
        <source>Version %1 is running. The file on disk was changed and refused at %2: fix it and save again.</source>
        <translation>正在运行版本 %1。磁盘上的文件已被修改，并于 %2 被拒绝：请修正后再次保存。</translation>
    </message>
    <message>
        <source>Version %1 is running. Running config differs from the file %2.</source>
        <translation>正在运行版本 %1。运行中的配置与文件 %2 不一致。</translation>
    </message>
    <message>
        <source>Version %1 is running. Running config differs from the file %2: the overlay %3 replaces %4, and a restart loads it too.</source>
        <translation>正在运行版本 %1。运行中的配置与文件 %2 不一致：覆盖文件 %3 替换了 %4，重启后也会加载它。</translation>
    </message>
    <message>
        <source>Version %1 is running. The file %2 on disk matches it.</source>
        <translation>正在运行版本 %1。磁盘上的文件 %2 与之一致。</translation>
    </message>
    <message>
        <source>Versions are kept in memory only: %1</source>
        <translation>版本仅保存在内存中：%1</translation>
    </message>
    <message numerus="yes">
        <source>%n version(s); select one to see what it changed, or two to compare</source>
        <translation>
            <numerusform>%n 个版本；选择一个查看其改动，或选择两个进行比较</numerusform>
        </translation>
    </message>
    <message>
        <source>Changes</source>
        <translation>改动</translation>
    </message>
    <message>
        <source>no version selected</source>
        <translation>未选择版本</translation>
    </message>
    <message>
        <source>Version %1</source>
        <translation>版本 %1</translation>
    </message>
    <message>
        <source>Version %1 → version %2</source>
        <translation>版本 %1 → 版本 %2</translation>
    </message>
    <message>
        <source>loading…</source>
        <translation>加载中…</translation>
    </message>
    <message>
        <source>the same config</source>
        <translation>配置相同</translation>
    </message>
    <message numerus="yes">
        <source>%n line(s) changed</source>
        <translation>
            <numerusform>%n 行有改动</numerusform>
        </translation>
    </message>
    <message>
        <source>Rolling back to version %1…</source>
        <translation>正在回滚到版本 %1…</translation>
    </message>
    <message>
        <source>Rolled back: version %1 is running.</source>
        <translation>已回滚：正在运行版本 %1。</translation>
    </message>
    <message>
        <source>Not rolled back: %1</source>
        <translation>未回滚：%1</translation>
    </message>
    <message numerus="yes">
        <source>the first version, %n line(s)</source>
        <translation>
            <numerusform>第一个版本，共 %n 行</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ConfigVersionsModel</name>
    <message>
        <source>file</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>console</source>
        <translation>控制台</translation>
    </message>
    <message>
        <source>admin API</source>
        <translation>管理 API</translation>
    </message>
    <message>
        <source>rollback</source>
        <translation>回滚</translation>
    </message>
    <message>
        <source>%1 (running)</source>
        <translation>%1（运行中）</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <source>Author</source>
        <translation>作者</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>备注</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::DeadLettersModel</name>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Runs</source>
        <translation>运行次数</translation>
    </message>
    <message>
        <source>Node</source>
        <extracomment>the fleet node that gave the task up</extracomment>
        <translation>节点</translation>
    </message>
    <message>
        <source>Last error</source>
        <translation>最后的错误</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Dead-lettered at</source>
        <translation>进入死信时间</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::DrillsPanel</name>
    <message>
        <source>Answer normally</source>
        <translation>正常应答</translation>
    </message>
    <message>
        <source>Fail with HTTP 500</source>
        <translation>返回 HTTP 500</translation>
    </message>
    <message>
        <source>Rate-limit (HTTP 429)</source>
        <translation>限流（HTTP 429）</translation>
    </message>
    <message>
        <source>Hang, never answer</source>
        <translation>挂起，永不应答</translation>
    </message>
    <message>
        <source>Reset the connection</source>
        <translation>重置连接</translation>
    </message>
    <message>
        <source>Cut streams midway</source>
        <translation>中途切断流</translation>
    </message>
    <message>
        <source>Failover drills</source>
        <translation>故障转移演练</translation>
    </message>
    <message>
        <source>Make a simulated provider misbehave and watch its breaker</source>
        <translation>让模拟提供商出现异常，观察其熔断器</translation>
    </message>
    <message>
        <source>Restore all</source>
        <translation>全部恢复</translation>
    </message>
    <message>
        <source>Every simulated provider answers normally again, as configured</source>
        <translation>所有模拟提供商恢复为按配置正常应答</translation>
    </message>
    <message>
        <source>Behaviour</source>
        <translation>行为</translation>
    </message>
    <message>
        <source>Latency</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>Error rate</source>
        <translation>错误率</translation>
    </message>
    <message>
        <source>No simulated providers in this configuration. Drills act on the built-in simulated providers of the demo.</source>
        <translation>此配置中没有模拟提供商。演练作用于演示内置的模拟提供商。</translation>
    </message>
    <message>
        <source>As configured</source>
        <translation>按配置</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1%</source>
        <translation>%1%</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::DryRunPanel</name>
    <message>
        <source>not used</source>
        <translation>未使用</translation>
    </message>
    <message>
        <source>1, explicit hint</source>
        <translation>1，显式提示</translation>
    </message>
    <message>
        <source>2, task tag</source>
        <translation>2，任务标签</translation>
    </message>
    <message>
        <source>3, input tokens</source>
        <translation>3，输入 Token 数</translation>
    </message>
    <message>
        <source>4, complexity score</source>
        <translation>4，复杂度评分</translation>
    </message>
    <message>
        <source>5, default</source>
        <translation>5，默认</translation>
    </message>
    <message>
        <source>primary</source>
        <translation>主选</translation>
    </message>
    <message>
        <source>cross-tier failover</source>
        <translation>跨档位故障转移</translation>
    </message>
    <message>
        <source>fallback chain</source>
        <translation>回退链</translation>
    </message>
    <message>
        <source>lighter model</source>
        <translation>更轻量的模型</translation>
    </message>
    <message>
        <source>Dry run</source>
        <translation>试运行</translation>
    </message>
    <message>
        <source>Sample</source>
        <translation>示例</translation>
    </message>
    <message>
        <source>Simple chat</source>
        <translation>简单对话</translation>
    </message>
    <message>
        <source>Code generation (pro)</source>
        <translation>代码生成（pro）</translation>
    </message>
    <message>
        <source>Sensitive data</source>
        <translation>敏感数据</translation>
    </message>
    <message>
        <source>Long document</source>
        <translation>长文档</translation>
    </message>
    <message>
        <source>Agent canary user</source>
        <translation>智能体金丝雀用户</translation>
    </message>
    <message>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <source>Request body</source>
        <translation>请求体</translation>
    </message>
    <message>
        <source>Headers, one &quot;name: value&quot; per line</source>
        <translation>请求头，每行一个 &quot;name: value&quot;</translation>
    </message>
    <message>
        <source>Live rules</source>
        <translation>生效中的规则</translation>
    </message>
    <message>
        <source>With your edits</source>
        <translation>含您的修改</translation>
    </message>
    <message>
        <source>Running...</source>
        <translation>正在运行…</translation>
    </message>
    <message>
        <source>No decision: %1</source>
        <translation>未得出决策：%1</translation>
    </message>
    <message>
        <source>Rule: %1</source>
        <translation>规则：%1</translation>
    </message>
    <message>
        <source>none matched</source>
        <translation>无匹配</translation>
    </message>
    <message>
        <source>Tier: none (the rule pins the target)</source>
        <translation>档位：无（规则已固定目标）</translation>
    </message>
    <message>
        <source>Tier: %1, cascade step %2</source>
        <translation>档位：%1，级联步骤 %2</translation>
    </message>
    <message>
        <source>Complexity score: %1</source>
        <translation>复杂度评分：%1</translation>
    </message>
    <message>
        <source>Canary side: %1</source>
        <translation>金丝雀分支：%1</translation>
    </message>
    <message>
        <source>Refused: no provider serves model %1</source>
        <translation>已拒绝：没有提供商提供模型 %1</translation>
    </message>
    <message>
        <source>Refused: no endpoint of the target can take the request</source>
        <translation>已拒绝：目标的所有端点都无法接收该请求</translation>
    </message>
    <message>
        <source>Candidates:</source>
        <translation>候选：</translation>
    </message>
    <message>
        <source>%1. %2 (%3), score %4, %5</source>
        <translation>%1. %2（%3），评分 %4，%5</translation>
    </message>
    <message>
        <source>Why:</source>
        <translation>原因：</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Responses API request</source>
        <translation>Responses API 请求</translation>
    </message>
    <message>
        <source>Embeddings</source>
        <translation>向量嵌入</translation>
    </message>
    <message>
        <source>Endpoint</source>
        <translation>端点</translation>
    </message>
    <message>
        <source>Rule: not used, %1 goes by model</source>
        <translation>规则：未使用，%1 按模型路由</translation>
    </message>
    <message>
        <source>Tier: none (tiers are for chat)</source>
        <translation>层级：无（层级仅用于对话）</translation>
    </message>
    <message>
        <source>other split branch</source>
        <translation>拆分的其他分支</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::FleetEndpointsModel</name>
    <message>
        <source>%1 does not list this endpoint</source>
        <translation>%1 未列出此端点</translation>
    </message>
    <message>
        <source>%1 (this node)</source>
        <translation>%1（本节点）</translation>
    </message>
    <message>
        <source>Endpoint</source>
        <translation>端点</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::FleetNodesModel</name>
    <message>
        <source>%1 (this node)</source>
        <translation>%1（本节点）</translation>
    </message>
    <message>
        <source>not published yet</source>
        <translation>尚未发布</translation>
    </message>
    <message>
        <source>now</source>
        <translation>刚刚</translation>
    </message>
    <message numerus="yes">
        <source>%n s ago</source>
        <translation>
            <numerusform>%n 秒前</numerusform>
        </translation>
    </message>
    <message>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <source>Address</source>
        <translation>地址</translation>
    </message>
    <message>
        <source>Version</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Config</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>In flight</source>
        <translation>进行中</translation>
    </message>
    <message>
        <source>Req/s</source>
        <translation>请求/秒</translation>
    </message>
    <message>
        <source>Endpoints</source>
        <translation>端点</translation>
    </message>
    <message>
        <source>Last seen</source>
        <translation>最后可见</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::FleetPage</name>
    <message>
        <source>The nodes sharing this node&apos;s Redis, as each last announced itself. They share the config, client keys, limits, budgets, agents and usage; each keeps its own breakers.</source>
        <translation>与本节点共用同一 Redis 的节点，按各自最近一次通告显示。它们共享配置、客户端密钥、限额、预算、智能体和用量；熔断器各自独立。</translation>
    </message>
    <message>
        <source>This gateway runs alone. Give each node a fleet section with one Redis to share the config, client keys, limits, budgets, agents and usage (docs/fleet.md).</source>
        <translation>此网关单独运行。为每个节点配置指向同一 Redis 的 fleet 段，即可共享配置、客户端密钥、限额、预算、智能体和用量（见 docs/fleet.md）。</translation>
    </message>
    <message>
        <source>Endpoints by node</source>
        <translation>各节点的端点</translation>
    </message>
    <message>
        <source>Each node&apos;s view of each provider and agent. A breaker opened on one node stays that node&apos;s: the others keep calling while their own calls succeed.</source>
        <translation>每个节点眼中的各提供商与智能体。一个节点上断开的熔断器只属于该节点：其他节点在自己的调用成功时继续调用。</translation>
    </message>
    <message>
        <source>Fleet %1</source>
        <translation>集群 %1</translation>
    </message>
    <message>
        <source>Fleet</source>
        <translation>集群</translation>
    </message>
    <message numerus="yes">
        <source>Redis %1 · %n live node(s)</source>
        <extracomment>%1 Redis address; %2 number of live nodes</extracomment>
        <translation>
            <numerusform>Redis %1 · %n 个存活节点</numerusform>
        </translation>
    </message>
    <message>
        <source>Redis %1 unreachable since %2: %3. This node serves from its own copies; the list shows the nodes as last seen.</source>
        <extracomment>%1 Redis address; %2 local time; %3 why</extracomment>
        <translation>Redis %1 自 %2 起无法连接：%3。本节点使用自己的副本继续服务；列表显示各节点最后一次可见时的状态。</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::HealthMatrixModel</name>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>%1 (%2%)</source>
        <translation>%1（%2%）</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>提供商</translation>
    </message>
    <message>
        <source>In flight</source>
        <translation>进行中</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>请求数</translation>
    </message>
    <message>
        <source>Errors</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>p50 latency</source>
        <translation>p50 延迟</translation>
    </message>
    <message>
        <source>p95 latency</source>
        <translation>p95 延迟</translation>
    </message>
    <message>
        <source>TTFT p50</source>
        <translation>首 Token p50</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Provider id from the configuration</source>
        <translation>配置文件中的提供商 ID</translation>
    </message>
    <message>
        <source>Calls sent to this provider and not yet answered</source>
        <translation>已发往该提供商、尚未得到应答的调用</translation>
    </message>
    <message>
        <source>Calls finished since start</source>
        <translation>启动以来已完成的调用</translation>
    </message>
    <message>
        <source>Median time to a complete answer over recent calls</source>
        <translation>最近调用中获得完整应答耗时的中位数</translation>
    </message>
    <message>
        <source>95th percentile time to a complete answer over recent calls</source>
        <translation>最近调用中获得完整应答耗时的第 95 百分位数</translation>
    </message>
    <message>
        <source>Median time to first token of streamed answers over recent calls</source>
        <translation>最近流式应答中首个 Token 到达耗时的中位数</translation>
    </message>
    <message>
        <source>Models this provider serves</source>
        <translation>该提供商提供的模型</translation>
    </message>
    <message numerus="yes">
        <source>%1% of the last %n call(s) failed</source>
        <translation>
            <numerusform>最近 %n 次调用中 %1% 失败</numerusform>
        </translation>
    </message>
    <message>
        <source>no calls yet</source>
        <translation>尚无调用</translation>
    </message>
    <message>
        <source>answering normally</source>
        <translation>应答正常</translation>
    </message>
    <message>
        <source>Closed</source>
        <extracomment>Circuit breaker state: traffic flows normally</extracomment>
        <translation>闭合</translation>
    </message>
    <message>
        <source>Ramping</source>
        <extracomment>Recovered endpoint taking a growing share of traffic</extracomment>
        <translation>恢复中</translation>
    </message>
    <message>
        <source>Failing</source>
        <extracomment>Breaker still closed, but recent calls fail</extracomment>
        <translation>失败中</translation>
    </message>
    <message>
        <source>Half-open</source>
        <extracomment>Circuit breaker state: one probe call is let through</extracomment>
        <translation>半开</translation>
    </message>
    <message>
        <source>Draining</source>
        <translation>排空中</translation>
    </message>
    <message>
        <source>Open</source>
        <extracomment>Circuit breaker state: no traffic until the cool-down ends</extracomment>
        <translation>断开</translation>
    </message>
    <message>
        <source>Disabled</source>
        <translation>已停用</translation>
    </message>
    <message>
        <source>%1 · %2</source>
        <extracomment>Breaker state and time left until it lets a probe through, e.g. &quot;Open · 42 s&quot;
----------
Rate-limited provider and time left until it takes calls again, e.g. &quot;Cooling down · 2 s&quot;</extracomment>
        <translation>%1 · %2</translation>
    </message>
    <message>
        <source>%1 %2%</source>
        <extracomment>Recovery ramp with the share of traffic taken, e.g. &quot;Ramping 35%&quot;</extracomment>
        <translation>%1 %2%</translation>
    </message>
    <message>
        <source>disabled by an operator; takes no traffic until enabled</source>
        <translation>已被操作员停用；启用前不接收流量</translation>
    </message>
    <message numerus="yes">
        <source>draining: no new requests, %n call(s) still open</source>
        <translation>
            <numerusform>排空中：不接收新请求，仍有 %n 个调用未完成</numerusform>
        </translation>
    </message>
    <message>
        <source>%1; next probe in %2</source>
        <translation>%1；%2 后下次探测</translation>
    </message>
    <message>
        <source>letting one probe call through; %1</source>
        <translation>放行一个探测调用；%1</translation>
    </message>
    <message>
        <source>recovered; taking %1% of its usual share</source>
        <translation>已恢复；承担平常流量份额的 %1%</translation>
    </message>
    <message>
        <source>%1 (%2 provider)
Models: %3</source>
        <extracomment>Provider tooltip: id, kind, then the models it serves</extracomment>
        <translation>%1（%2 提供商）
模型：%3</translation>
    </message>
    <message>
        <source>Breaker</source>
        <translation>熔断器</translation>
    </message>
    <message>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <source>Circuit breaker state, or what an operator set; open breakers count down to their next probe</source>
        <translation>熔断器状态或操作员设置的状态；断开的熔断器会倒计时至下次探测</translation>
    </message>
    <message>
        <source>Why the provider is in its state</source>
        <translation>提供商处于该状态的原因</translation>
    </message>
    <message>
        <source>Cooling down</source>
        <extracomment>The provider answered 429 (rate limited): no calls until its Retry-After passes</extracomment>
        <translation>限流冷却中</translation>
    </message>
    <message>
        <source>rate limited by the provider (HTTP 429); no calls until its Retry-After has passed, its breaker untouched</source>
        <translation>服务商限流（HTTP 429）；在其 Retry-After 到期前不再调用，熔断器不受影响</translation>
    </message>
    <message>
        <source>%1 of %2 calls failed since start (%3%); %4% of recent calls failed</source>
        <translation>启动以来 %2 次调用中失败 %1 次（%3%）；最近调用的失败率为 %4%</translation>
    </message>
    <message>
        <source>Failed calls since start, and their share of all calls since start</source>
        <translation>启动以来失败的调用次数，及其占启动以来全部调用的比例</translation>
    </message>
    <message>
        <source>not listed</source>
        <translation>未列出</translation>
    </message>
    <message>
        <source>No other node lists this provider yet</source>
        <translation>尚无其他节点列出此提供商</translation>
    </message>
    <message>
        <source>Other nodes</source>
        <translation>其他节点</translation>
    </message>
    <message>
        <source>How the fleet&apos;s other nodes see this provider, as each last published it. Each node&apos;s breakers are its own and are never opened from here.</source>
        <translation>集群中其他节点眼中的此提供商，按各自最近一次发布显示。每个节点的熔断器各自独立，不会因此而断开。</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ImpactCellsModel</name>
    <message>
        <source>refused: unknown model</source>
        <translation>拒绝：未知模型</translation>
    </message>
    <message>
        <source>refused: no endpoint can take it</source>
        <translation>拒绝：没有端点可以接收</translation>
    </message>
    <message>
        <source>no rule</source>
        <translation>无规则</translation>
    </message>
    <message>
        <source>unchanged</source>
        <translation>不变</translation>
    </message>
    <message>
        <source>Live rules</source>
        <translation>生效中的规则</translation>
    </message>
    <message>
        <source>With your edits</source>
        <translation>含您的修改</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>请求数</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>占比</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ImpactExamplesModel</name>
    <message>
        <source>Request</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>User</source>
        <translation>用户</translation>
    </message>
    <message>
        <source>Live rules</source>
        <translation>生效中的规则</translation>
    </message>
    <message>
        <source>With your edits</source>
        <translation>含您的修改</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ImpactPanel</name>
    <message>
        <source>Impact preview</source>
        <translation>影响预览</translation>
    </message>
    <message>
        <source>Where the live requests of the last hour would go with your edits: each sampled request is routed again under the live rules and under yours.</source>
        <translation>过去一小时的线上请求在您的修改下会去往何处：每个抽样请求分别按生效中的规则和您的规则重新路由。</translation>
    </message>
    <message>
        <source>Preview impact</source>
        <translation>预览影响</translation>
    </message>
    <message>
        <source>Sample requests of the selected row</source>
        <translation>所选行的抽样请求</translation>
    </message>
    <message>
        <source>Edit the rules, then preview where recent traffic would go.</source>
        <translation>修改规则后，预览近期流量会去往何处。</translation>
    </message>
    <message>
        <source>No preview: %1</source>
        <translation>无法预览：%1</translation>
    </message>
    <message numerus="yes">
        <source>No live requests in the last %n minute(s) to replay.</source>
        <translation>
            <numerusform>最近 %n 分钟内没有可重放的线上请求。</numerusform>
        </translation>
    </message>
    <message>
        <source>Routing the sample under both rule sets...</source>
        <translation>正在按两套规则路由抽样请求…</translation>
    </message>
    <message>
        <source>%1 of %2 sampled requests would move (%3%4); %5 would now be refused.</source>
        <translation>%2 个抽样请求中有 %1 个会改变去向（%3%4）；%5 个将被拒绝。</translation>
    </message>
    <message>
        <source>The rules changed since this preview: preview again to see their effect.</source>
        <translation>此预览之后规则已有改动：请重新预览以查看其影响。</translation>
    </message>
    <message>
        <source>Replayed: the sampled requests since %1.</source>
        <translation>已重放：自 %1 以来的抽样请求。</translation>
    </message>
    <message>
        <source>The sample keeps up to %1 requests of the last %2 minutes, at most %3 a minute; now one request in %4.</source>
        <translation>抽样最多保留最近 %2 分钟内的 %1 个请求，每分钟最多 %3 个；当前每 %4 个请求取 1 个。</translation>
    </message>
    <message>
        <source>The sample keeps up to %1 requests of the last %2 minutes, at most %3 a minute; now every request.</source>
        <translation>抽样最多保留最近 %2 分钟内的 %1 个请求，每分钟最多 %3 个；当前保留每个请求。</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::IssueKeyDialog</name>
    <message>
        <source>Copied</source>
        <translation>已复制</translation>
    </message>
    <message>
        <source>Issue a client key</source>
        <translation>签发客户端密钥</translation>
    </message>
    <message>
        <source>Requests with the key belong to its tenant, within its limits. Its text is shown once, when it is issued.</source>
        <translation>使用此密钥的请求归属于它的租户，并受它的限额约束。密钥文本只在签发时显示一次。</translation>
    </message>
    <message>
        <source>T&amp;enant:</source>
        <translation>租户(&amp;E)：</translation>
    </message>
    <message>
        <source>required, e.g. team-a</source>
        <translation>必填，例如 team-a</translation>
    </message>
    <message>
        <source>Key &amp;id:</source>
        <translation>密钥 ID(&amp;I)：</translation>
    </message>
    <message>
        <source>optional; made up when empty</source>
        <translation>可选；留空时自动生成</translation>
    </message>
    <message>
        <source>Issue key</source>
        <translation>签发密钥</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <source>This is the only time the key is shown: Switchyard keeps only its SHA-256. Copy it now and hand it to its user; once this dialog is closed, a lost key can only be revoked and another issued.</source>
        <translation>这是该密钥唯一一次显示：Switchyard 只保存它的 SHA-256。请现在复制并交给它的使用者；关闭此对话框后，丢失的密钥只能吊销后重新签发。</translation>
    </message>
    <message>
        <source>Key %1 issued for tenant %2</source>
        <translation>已为租户 %2 签发密钥 %1</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::KeyLimitsDialog</name>
    <message>
        <source>Edit the limits of key %1</source>
        <translation>编辑密钥 %1 的限额</translation>
    </message>
    <message>
        <source>Key %1 of tenant %2. The new limits apply from its next request, on every node of a fleet.</source>
        <translation>租户 %2 的密钥 %1。新限额从它的下一个请求起生效，集群中的每个节点都是如此。</translation>
    </message>
    <message>
        <source>Save limits</source>
        <translation>保存限额</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::KeyLimitsFields</name>
    <message>
        <source>&amp;Requests per minute:</source>
        <translation>每分钟请求数(&amp;R)：</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>不限</translation>
    </message>
    <message>
        <source>&amp;Tokens per minute:</source>
        <translation>每分钟令牌数(&amp;T)：</translation>
    </message>
    <message>
        <source>Input plus output tokens, counted when each request finishes</source>
        <translation>输入与输出令牌之和，在每个请求结束时计入</translation>
    </message>
    <message>
        <source>&amp;Models:</source>
        <translation>模型(&amp;M)：</translation>
    </message>
    <message>
        <source>all models; or names and patterns, e.g. gpt-4o*, claude-*</source>
        <translation>全部模型；或填写名称与模式，例如 gpt-4o*, claude-*</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::KeysModel</name>
    <message>
        <source>Revoke it by removing it from auth.keys in the config file</source>
        <translation>从配置文件的 auth.keys 中删除即可吊销</translation>
    </message>
    <message>
        <source>Revoke it with DELETE /admin/v1/keys/%1</source>
        <translation>使用 DELETE /admin/v1/keys/%1 吊销</translation>
    </message>
    <message>
        <source>config file</source>
        <translation>配置文件</translation>
    </message>
    <message>
        <source>admin API</source>
        <translation>管理 API</translation>
    </message>
    <message>
        <source>no limit</source>
        <translation>不限</translation>
    </message>
    <message>
        <source>all models</source>
        <translation>所有模型</translation>
    </message>
    <message>
        <source>Key</source>
        <translation>密钥</translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>Defined in</source>
        <translation>定义于</translation>
    </message>
    <message>
        <source>Requests/min</source>
        <translation>请求数/分钟</translation>
    </message>
    <message>
        <source>Tokens/min</source>
        <translation>令牌数/分钟</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Created</source>
        <translation>创建时间</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::KeysPage</name>
    <message>
        <source>Client API keys</source>
        <translation>客户端 API 密钥</translation>
    </message>
    <message>
        <source>No client keys: the gateway is open, and a request&apos;s tenant is what its x-switchyard-tenant header says.</source>
        <translation>没有客户端密钥：网关处于开放状态，请求的租户取自其 x-switchyard-tenant 请求头。</translation>
    </message>
    <message>
        <source>Each request&apos;s tenant comes from its key. Keys are issued here, with POST /admin/v1/keys or in the config file (auth.keys); a key&apos;s secret is shown once, when it is issued, and never again.</source>
        <translation>每个请求的租户来自它的密钥。密钥可在此处签发，也可通过 POST /admin/v1/keys 签发，或写在配置文件中（auth.keys）；密钥文本只在签发时显示一次，之后不再显示。</translation>
    </message>
    <message>
        <source>Issue key…</source>
        <translation>签发密钥…</translation>
    </message>
    <message>
        <source>Edit limits…</source>
        <translation>编辑限额…</translation>
    </message>
    <message>
        <source>Revoke…</source>
        <translation>吊销…</translation>
    </message>
    <message>
        <source>Key %1 is defined in the config file: change or remove it under auth.keys there</source>
        <translation>密钥 %1 定义在配置文件中：请在该文件的 auth.keys 下修改或删除它</translation>
    </message>
    <message>
        <source>Key %1 issued.</source>
        <translation>已签发密钥 %1。</translation>
    </message>
    <message>
        <source>Limits of key %1 saved.</source>
        <translation>已保存密钥 %1 的限额。</translation>
    </message>
    <message>
        <source>Revoke key %1</source>
        <translation>吊销密钥 %1</translation>
    </message>
    <message>
        <source>Revoke key %1 of tenant %2?</source>
        <translation>吊销租户 %2 的密钥 %1？</translation>
    </message>
    <message>
        <source>Requests with it are refused from now on (401), on every node of a fleet. This cannot be undone: the tenant needs a new key.</source>
        <translation>从现在起，使用它的请求都会被拒绝（401），集群中的每个节点都是如此。此操作无法撤销：该租户需要一个新密钥。</translation>
    </message>
    <message>
        <source>Revoke</source>
        <translation>吊销</translation>
    </message>
    <message>
        <source>Key %1 revoked.</source>
        <translation>已吊销密钥 %1。</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::MainWindow</name>
    <message>
        <source>Switchyard</source>
        <translation>Switchyard</translation>
    </message>
    <message>
        <source>Controls</source>
        <translation>控制栏</translation>
    </message>
    <message>
        <source>Gateway console</source>
        <translation>网关控制台</translation>
    </message>
    <message>
        <source>Demo traffic</source>
        <translation>演示流量</translation>
    </message>
    <message>
        <source>Send simulated client requests through the gateway, mixed streamed and not</source>
        <translation>通过网关发送模拟的客户端请求，流式与非流式混合</translation>
    </message>
    <message>
        <source>&amp;Rate</source>
        <translation>速率(&amp;R)</translation>
    </message>
    <message>
        <source> req/s</source>
        <translation> 请求/秒</translation>
    </message>
    <message>
        <source>Demo traffic rate, in requests per second</source>
        <translation>演示流量的速率，单位为每秒请求数</translation>
    </message>
    <message>
        <source>Starting the gateway…</source>
        <translation>正在启动网关…</translation>
    </message>
    <message>
        <source>Listening on %1  ·  OpenAI clients use http://%1/v1</source>
        <translation>正在监听 %1  ·  OpenAI 客户端请使用 http://%1/v1</translation>
    </message>
    <message>
        <source>Overview</source>
        <translation>概览</translation>
    </message>
    <message>
        <source>Routes</source>
        <translation>路由</translation>
    </message>
    <message>
        <source>Traces</source>
        <translation>追踪</translation>
    </message>
    <message>
        <source>engine lag %1 ms  ·  %2 req/s</source>
        <extracomment>%1 how late the engine thread ran a due timer, in ms; %2 requests per second</extracomment>
        <translation>引擎延迟 %1 毫秒  ·  %2 请求/秒</translation>
    </message>
    <message>
        <source>Engine lag: how late the engine thread ran a timer that was due, at the last tick. Every request is routed and relayed on that thread: more than a few milliseconds means requests wait for the gateway itself.</source>
        <translation>引擎延迟：引擎线程在上一次计时中执行到期定时器的滞后时间。每个请求都在该线程上路由和转发：超过几毫秒意味着请求在等待网关本身。</translation>
    </message>
    <message>
        <source>OpenTelemetry export: %1 spans exported, %2 dropped (queue full), %3 given up, %4 failed exports, %5 queued</source>
        <translation>OpenTelemetry 导出：已导出 %1 个 span，丢弃 %2 个（队列已满），放弃 %3 个，导出失败 %4 次，排队 %5 个</translation>
    </message>
    <message>
        <source>Listening on %1  ·  OpenAI clients use https://%1/v1</source>
        <translation>正在监听 %1  ·  OpenAI 客户端请使用 https://%1/v1</translation>
    </message>
    <message>
        <source>⚠ Open to the network without TLS</source>
        <translation>⚠ 未启用 TLS 即对网络开放</translation>
    </message>
    <message>
        <source>Switchyard listens on %1, which other machines can reach, in plain HTTP: API keys, the admin token and prompts cross the network readable. Configure `tls` with a certificate and key, or listen on 127.0.0.1 behind a proxy that terminates TLS.</source>
        <translation>Switchyard 以明文 HTTP 监听 %1，其他机器可以访问：API 密钥、管理令牌和提示词以可读形式在网络上传输。请在 `tls` 中配置证书和私钥，或只监听 127.0.0.1 并由终止 TLS 的代理转发。</translation>
    </message>
    <message>
        <source>Keys</source>
        <translation>密钥</translation>
    </message>
    <message>
        <source>Config</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Alerts (%1)</source>
        <extracomment>The Alerts tab; with alerts raised it says how many, e.g. &quot;Alerts (2)&quot;</extracomment>
        <translation>告警（%1）</translation>
    </message>
    <message>
        <source>Alerts</source>
        <translation>告警</translation>
    </message>
    <message>
        <source>Usage</source>
        <translation>用量</translation>
    </message>
    <message>
        <source>Usage ledger not written</source>
        <translation>用量账本未写入</translation>
    </message>
    <message numerus="yes">
        <source>Fleet %1  ·  %n node(s)</source>
        <extracomment>The status bar of a node in a fleet: %1 the fleet&apos;s name, %n its live nodes</extracomment>
        <translation>
            <numerusform>集群 %1  ·  %n 个节点</numerusform>
        </translation>
    </message>
    <message>
        <source>This node is %1 in fleet %2, sharing keys, limits and config through %3.</source>
        <translation>本节点是集群 %2 中的 %1，通过 %3 共享密钥、限额和配置。</translation>
    </message>
    <message>
        <source>Fleet link down since %1</source>
        <extracomment>%1 the local time the link to the fleet&apos;s Redis went down</extracomment>
        <translation>集群连接自 %1 起中断</translation>
    </message>
    <message>
        <source>%1
This node keeps serving from its own copy of the keys, limits and config; changes made here are sent when the link is back.</source>
        <translation>%1
本节点继续使用自己保存的密钥、限额和配置提供服务；在此所做的更改会在连接恢复后发送。</translation>
    </message>
    <message>
        <source>Fleet</source>
        <translation>集群</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>队列</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::OverviewPage</name>
    <message>
        <source>Total requests</source>
        <translation>请求总数</translation>
    </message>
    <message>
        <source>Request rate</source>
        <translation>请求速率</translation>
    </message>
    <message>
        <source>In flight</source>
        <translation>进行中</translation>
    </message>
    <message>
        <source>Providers up</source>
        <translation>可用的提供商</translation>
    </message>
    <message>
        <source>Requests per second</source>
        <translation>每秒请求数</translation>
    </message>
    <message>
        <source>last 60 s</source>
        <translation>最近 60 秒</translation>
    </message>
    <message>
        <source>Providers</source>
        <translation>提供商</translation>
    </message>
    <message>
        <source>Select a provider to act on it; right-click for the same actions</source>
        <translation>选择一个提供商以对其操作；右键单击可执行相同操作</translation>
    </message>
    <message>
        <source>Enable</source>
        <translation>启用</translation>
    </message>
    <message>
        <source>Disable</source>
        <translation>停用</translation>
    </message>
    <message>
        <source>Let the selected provider take traffic again</source>
        <translation>让所选提供商重新接收流量</translation>
    </message>
    <message>
        <source>Take the selected provider out of rotation now</source>
        <translation>立即将所选提供商移出轮换</translation>
    </message>
    <message>
        <source>Drain</source>
        <translation>排空</translation>
    </message>
    <message>
        <source>Stop new requests to the selected provider and let open streams finish</source>
        <translation>停止向所选提供商发送新请求，并让未完成的流结束</translation>
    </message>
    <message>
        <source>Trip</source>
        <translation>熔断</translation>
    </message>
    <message>
        <source>Force the selected provider&apos;s breaker open, as a drill</source>
        <translation>强制断开所选提供商的熔断器，用于演练</translation>
    </message>
    <message>
        <source>Reset</source>
        <translation>重置</translation>
    </message>
    <message>
        <source>Close the selected provider&apos;s breaker and forget its failures</source>
        <translation>闭合所选提供商的熔断器并清除其失败记录</translation>
    </message>
    <message>
        <source>since start</source>
        <translation>自启动以来</translation>
    </message>
    <message>
        <source>%1 req/s</source>
        <translation>%1 请求/秒</translation>
    </message>
    <message>
        <source>demo traffic at %1 req/s</source>
        <translation>演示流量 %1 请求/秒</translation>
    </message>
    <message>
        <source>client requests</source>
        <translation>客户端请求</translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <extracomment>Providers that are up, out of all providers, e.g. &quot;2 / 3&quot;</extracomment>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>no providers configured</source>
        <translation>未配置任何提供商</translation>
    </message>
    <message>
        <source>all healthy</source>
        <translation>全部正常</translation>
    </message>
    <message>
        <source>%1 degraded, %2 down</source>
        <translation>%1 个降级，%2 个不可用</translation>
    </message>
    <message>
        <source>open connections: %1</source>
        <translation>打开的连接：%1</translation>
    </message>
    <message>
        <source>open connections: %1 · refused: %2</source>
        <extracomment>%1 open client connections; %2 connections refused over the connection limits</extracomment>
        <translation>打开的连接：%1 · 已拒绝：%2</translation>
    </message>
    <message>
        <source>Client connections open: %1
Refused, limits.max_connections reached: %2
Refused, limits.max_connections_per_address reached: %3
Closed, request headers too slow: %4
Closed, request body too slow: %5
Closed, idle longer than limits.keep_alive_idle: %6</source>
        <translation>打开的客户端连接：%1
已拒绝，达到 limits.max_connections：%2
已拒绝，达到 limits.max_connections_per_address：%3
已关闭，请求头过慢：%4
已关闭，请求体过慢：%5
已关闭，空闲超过 limits.keep_alive_idle：%6</translation>
    </message>
    <message>
        <source>Traffic by provider</source>
        <translation>各提供商流量</translation>
    </message>
    <message>
        <source>calls/s · last 5 min</source>
        <extracomment>Calls the gateway started to each provider, per second</extracomment>
        <translation>调用/秒 · 最近 5 分钟</translation>
    </message>
    <message>
        <source>Calls sent to each provider per second, over the last 5 s, counted when they start; retries and failovers count once per provider they reach.</source>
        <translation>每秒发往各提供商的调用数，按最近 5 秒计算，在调用开始时计数；重试和故障转移在其到达的每个提供商处各计一次。</translation>
    </message>
    <message>
        <source>waiting to start: %1</source>
        <extracomment>Requests read during a burst, waiting for the engine to start them</extracomment>
        <translation>等待启动：%1</translation>
    </message>
    <message>
        <source>Requests in flight: %1, waiting to start: %2 (a burst&apos;s backlog, started in order within admission.max_start_wait)
</source>
        <extracomment>%1 requests in flight, %2 of them read and waiting for the engine to start them</extracomment>
        <translation>进行中的请求：%1，其中等待启动：%2（突发流量的积压，在 admission.max_start_wait 内按顺序启动）
</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::QueueFailuresModel</name>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>错误</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Failed at</source>
        <translation>失败时间</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::QueuePage</name>
    <message>
        <source>Background queue</source>
        <translation>后台队列</translation>
    </message>
    <message>
        <source>Responses requests with &quot;background&quot;: true wait here for a worker, then run like any other request. The same figures are served as GET /admin/v1/queue.</source>
        <translation>带有 &quot;background&quot;: true 的 Responses 请求在此等待工作线程，然后像其他请求一样运行。同样的数据也由 GET /admin/v1/queue 提供。</translation>
    </message>
    <message>
        <source>Running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <source>Finished since start</source>
        <translation>启动以来已结束</translation>
    </message>
    <message>
        <source>Stored responses</source>
        <translation>已存储的响应</translation>
    </message>
    <message>
        <source>Queued and running</source>
        <translation>排队中与运行中</translation>
    </message>
    <message>
        <source>No background task is queued or running. A client starts one with POST /v1/responses and &quot;background&quot;: true.</source>
        <translation>没有排队或运行中的后台任务。客户端可通过 POST /v1/responses 并设置 &quot;background&quot;: true 来启动一个。</translation>
    </message>
    <message>
        <source>Cancel task…</source>
        <translation>取消任务…</translation>
    </message>
    <message>
        <source>Recent failures</source>
        <translation>最近的失败</translation>
    </message>
    <message>
        <source>The latest background tasks that failed, newest first.</source>
        <translation>最近失败的后台任务，最新的在前。</translation>
    </message>
    <message>
        <source>No background task has failed.</source>
        <translation>没有失败的后台任务。</translation>
    </message>
    <message>
        <source>%1 / %2</source>
        <extracomment>running tasks / workers, e.g. &quot;1 / 4&quot;</extracomment>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <source>high %1 · normal %2 · low %3</source>
        <extracomment>queued tasks by priority, then how long the oldest has waited</extracomment>
        <translation>高 %1 · 普通 %2 · 低 %3</translation>
    </message>
    <message>
        <source>oldest waited %1</source>
        <translation>最久已等待 %1</translation>
    </message>
    <message>
        <source>%1 completed</source>
        <translation>%1 个已完成</translation>
    </message>
    <message>
        <source>%1 failed · %2 cancelled · %3 timed out</source>
        <translation>%1 个失败 · %2 个已取消 · %3 个超时</translation>
    </message>
    <message>
        <source>%1 incomplete</source>
        <translation>%1 个未完成</translation>
    </message>
    <message>
        <source>Timed out tasks ran longer than responses.task_timeout; they count as failed too.</source>
        <translation>超时的任务运行时间超过了 responses.task_timeout；它们也计为失败。</translation>
    </message>
    <message>
        <source>%1 of %2</source>
        <extracomment>bytes stored of the most kept, e.g. &quot;12.3 KB of 256 MB&quot;</extracomment>
        <translation>%1 / 上限 %2</translation>
    </message>
    <message>
        <source>Beyond responses.max_stored_bytes the oldest finished responses are dropped first.</source>
        <translation>超过 responses.max_stored_bytes 时，最早结束的响应会先被丢弃。</translation>
    </message>
    <message>
        <source>Showing the first %1 of %2 tasks; GET /admin/v1/queue lists them all.</source>
        <translation>显示 %2 个任务中的前 %1 个；GET /admin/v1/queue 会列出全部。</translation>
    </message>
    <message>
        <source>Select a queued or running task</source>
        <translation>请选择一个排队中或运行中的任务</translation>
    </message>
    <message>
        <source>Cancel task %1</source>
        <translation>取消任务 %1</translation>
    </message>
    <message>
        <source>Cancel background task %1 of tenant %2?</source>
        <translation>取消租户 %2 的后台任务 %1？</translation>
    </message>
    <message>
        <source>Its run is stopped as if its client had left; the client reads status &quot;cancelled&quot;. This cannot be undone.</source>
        <translation>它的运行会像客户端已离开一样被停止；客户端读到的状态为 &quot;cancelled&quot;。此操作无法撤销。</translation>
    </message>
    <message>
        <source>It never runs; the client reads status &quot;cancelled&quot;. This cannot be undone.</source>
        <translation>它将不会运行；客户端读到的状态为 &quot;cancelled&quot;。此操作无法撤销。</translation>
    </message>
    <message>
        <source>Cancel task</source>
        <translation>取消任务</translation>
    </message>
    <message>
        <source>Keep it</source>
        <translation>保留</translation>
    </message>
    <message>
        <source>Cancelling task %1…</source>
        <translation>正在取消任务 %1…</translation>
    </message>
    <message>
        <source>Task %1 cancelled.</source>
        <translation>任务 %1 已取消。</translation>
    </message>
    <message>
        <source>tasks running / workers on this node</source>
        <translation>运行中的任务 / 本节点的工作线程</translation>
    </message>
    <message>
        <source>Dead letters</source>
        <translation>死信</translation>
    </message>
    <message>
        <source>Tasks of the fleet that failed on every run their delivery limit allows, or whose nodes kept stopping under them. Their clients read status &quot;failed&quot;. Retry queues one again with its runs counted from zero; Discard drops it from this list.</source>
        <translation>集群中在投递上限允许的每次运行都失败、或运行它的节点反复停止的任务。其客户端读到的状态是 &quot;failed&quot;。“重试”会将任务重新排队，运行次数从零计起；“丢弃”会将其从此列表移除。</translation>
    </message>
    <message>
        <source>No task is in the dead letters.</source>
        <translation>死信中没有任务。</translation>
    </message>
    <message>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <source>Discard</source>
        <translation>丢弃</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <extracomment>a fleet node and the tasks it runs, e.g. &quot;gw-1: 2&quot;</extracomment>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>Select a dead letter</source>
        <translation>请选择一条死信</translation>
    </message>
    <message>
        <source>Queuing task %1 again…</source>
        <translation>正在重新排队任务 %1…</translation>
    </message>
    <message>
        <source>Discarding task %1…</source>
        <translation>正在丢弃任务 %1…</translation>
    </message>
    <message>
        <source>Task %1 queued again.</source>
        <translation>任务 %1 已重新排队。</translation>
    </message>
    <message>
        <source>Task %1 discarded.</source>
        <translation>任务 %1 已丢弃。</translation>
    </message>
    <message>
        <source>Running on this node</source>
        <translation>本节点运行中</translation>
    </message>
    <message>
        <source>No background task runs on this node. The fleet&apos;s queue is summed up above.</source>
        <translation>本节点没有运行中的后台任务。集群的队列汇总见上方。</translation>
    </message>
    <message>
        <source>on this node · %1 in the fleet</source>
        <extracomment>%1: the background tasks running on all the fleet&apos;s nodes</extracomment>
        <translation>本节点 · 集群共 %1 个</translation>
    </message>
    <message>
        <source>No task runs on any node of the fleet.</source>
        <translation>集群中没有任何节点在运行任务。</translation>
    </message>
    <message>
        <source>Running per node: %1</source>
        <translation>各节点运行中：%1</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::RouteRulesModel</name>
    <message>
        <source>every request</source>
        <translation>所有请求</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>split by %1: %2</source>
        <translation>按 %1 分流：%2</translation>
    </message>
    <message>
        <source>provider %1</source>
        <translation>提供商 %1</translation>
    </message>
    <message>
        <source>pool %1</source>
        <translation>池 %1</translation>
    </message>
    <message>
        <source>tier %1</source>
        <translation>档位 %1</translation>
    </message>
    <message>
        <source>Priority</source>
        <translation>优先级</translation>
    </message>
    <message>
        <source>Rule</source>
        <translation>规则</translation>
    </message>
    <message>
        <source>When</source>
        <translation>条件</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::RoutesView</name>
    <message>
        <source>Applying...</source>
        <translation>正在应用…</translation>
    </message>
    <message>
        <source>Applied: new requests use these rules now.</source>
        <translation>已应用：新请求现在使用这些规则。</translation>
    </message>
    <message>
        <source>Not applied: %1</source>
        <translation>未应用：%1</translation>
    </message>
    <message>
        <source>Dry run</source>
        <translation>试运行</translation>
    </message>
    <message>
        <source>Impact preview</source>
        <translation>影响预览</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::RuleEditorPanel</name>
    <message>
        <source>Edit rule</source>
        <translation>编辑规则</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <source>Priority</source>
        <translation>优先级</translation>
    </message>
    <message>
        <source>Conditions (field, operator, value)</source>
        <translation>条件（字段、运算符、值）</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>提供商</translation>
    </message>
    <message>
        <source>Pool</source>
        <translation>池</translation>
    </message>
    <message>
        <source>Tier</source>
        <translation>档位</translation>
    </message>
    <message>
        <source>Canary split</source>
        <translation>金丝雀分流</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::RuleListPanel</name>
    <message>
        <source>Rules</source>
        <translation>规则</translation>
    </message>
    <message>
        <source>In priority order: the first rule that matches a request wins.</source>
        <translation>按优先级排序：第一条匹配请求的规则生效。</translation>
    </message>
    <message>
        <source>Add rule</source>
        <translation>添加规则</translation>
    </message>
    <message>
        <source>Delete rule</source>
        <translation>删除规则</translation>
    </message>
    <message>
        <source>Revert</source>
        <translation>还原</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>应用</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ShadowComparisonModel</name>
    <message>
        <source>%1 %</source>
        <extracomment>An error rate, e.g. &quot;2.5 %&quot;
----------
The shadow&apos;s figure relative to live&apos;s, e.g. &quot;+12 %&quot;</extracomment>
        <translation>%1 %</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <extracomment>Milliseconds, e.g. &quot;840 ms&quot;</extracomment>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>请求数</translation>
    </message>
    <message>
        <source>Median latency</source>
        <translation>延迟中位数</translation>
    </message>
    <message>
        <source>Error rate</source>
        <translation>错误率</translation>
    </message>
    <message>
        <source>Tokens per request</source>
        <translation>每个请求的令牌数</translation>
    </message>
    <message>
        <source>Cost per request</source>
        <translation>每个请求的成本</translation>
    </message>
    <message>
        <source>%1 pts</source>
        <extracomment>A difference of two error rates in percentage points, e.g. &quot;+1.5 pts&quot;</extracomment>
        <translation>%1 个百分点</translation>
    </message>
    <message>
        <source>Live</source>
        <translation>在线</translation>
    </message>
    <message>
        <source>Shadow</source>
        <translation>影子</translation>
    </message>
    <message>
        <source>Shadow vs live</source>
        <extracomment>Column header: the shadow&apos;s figure compared with live&apos;s</extracomment>
        <translation>影子相对在线</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::ShadowPanel</name>
    <message>
        <source>Shadow traffic</source>
        <translation>影子流量</translation>
    </message>
    <message numerus="yes">
        <source>%n finished request(s) came faster than the console refreshes and are not counted.</source>
        <translation>
            <numerusform>有 %n 个已完成的请求来得比控制台刷新更快，未计入。</numerusform>
        </translation>
    </message>
    <message>
        <source>The route whose live requests and shadow calls are compared</source>
        <translation>对比其在线请求与影子调用的路由</translation>
    </message>
    <message>
        <source>No shadow call has finished since the console opened. A rule with `shadow: {target, share}` also sends a share of its requests to another provider, to compare it with the live one; the client only ever gets the live answer.</source>
        <translation>控制台打开以来还没有完成的影子调用。带有 `shadow: {target, share}` 的规则会把它的一部分请求同时发给另一个提供方，以便与在线请求比较；客户端只会收到在线的回答。</translation>
    </message>
    <message>
        <source>%1 against %2, since the console opened</source>
        <extracomment>The providers compared, e.g. &quot;cloud-a against candidate, since the console opened&quot;</extracomment>
        <translation>%1 对比 %2，自控制台打开以来</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::SplitEditor</name>
    <message>
        <source>Provider</source>
        <translation>提供商</translation>
    </message>
    <message>
        <source>Pool</source>
        <translation>池</translation>
    </message>
    <message>
        <source>Tier</source>
        <translation>档位</translation>
    </message>
    <message>
        <source>user</source>
        <translation>用户</translation>
    </message>
    <message>
        <source>tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>session</source>
        <translation>会话</translation>
    </message>
    <message>
        <source>Split by</source>
        <translation>分流依据</translation>
    </message>
    <message>
        <source>The request value that keeps a client on one side of the split; requests without it use their request id</source>
        <translation>让同一客户端始终落在分流同一侧的请求值；没有该值的请求改用其请求 ID</translation>
    </message>
    <message>
        <source>Branch target</source>
        <translation>分支目标</translation>
    </message>
    <message>
        <source>Weight</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Relative to the other branches; 0 sends this branch nothing</source>
        <translation>相对于其他分支的权重；为 0 时此分支不接收流量</translation>
    </message>
    <message>
        <source>Remove this branch</source>
        <translation>删除此分支</translation>
    </message>
    <message>
        <source>Add branch</source>
        <translation>添加分支</translation>
    </message>
    <message>
        <source>%1 %</source>
        <extracomment>A branch&apos;s share of the split&apos;s traffic, e.g. &quot;90 %&quot;</extracomment>
        <translation>%1 %</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::TopSpendersModel</name>
    <message numerus="yes">
        <source>%n request(s) with estimated tokens: the provider reported no usage</source>
        <translation>
            <numerusform>%n 个请求的令牌数为估算：提供方未报告用量</numerusform>
        </translation>
    </message>
    <message>
        <source>(no tenant)</source>
        <translation>（无租户）</translation>
    </message>
    <message>
        <source>%1 → %2</source>
        <extracomment>input tokens → output tokens</extracomment>
        <translation>%1 → %2</translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>请求数</translation>
    </message>
    <message>
        <source>Tokens in → out</source>
        <translation>令牌 输入 → 输出</translation>
    </message>
    <message>
        <source>Estimated</source>
        <translation>估算</translation>
    </message>
    <message>
        <source>Spend</source>
        <translation>花费</translation>
    </message>
    <message>
        <source>%1 input tokens read from the prompt cache, %2 written to it</source>
        <extracomment>%1 input tokens read from the providers&apos; prompt caches; %2 written to them</extracomment>
        <translation>从提示缓存读取 %1 个输入令牌，写入 %2 个</translation>
    </message>
    <message>
        <source>Prompt-cache savings: %1
%2</source>
        <extracomment>%1 US dollars the prompt cache saved (negative: it cost more); %2 its reads and writes</extracomment>
        <translation>提示缓存节省：%1
%2</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::TraceListModel</name>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>Last failed attempt: %1</source>
        <translation>最后一次失败的尝试：%1</translation>
    </message>
    <message>
        <source>default</source>
        <translation>默认</translation>
    </message>
    <message>
        <source>rung %1</source>
        <translation>第 %1 级</translation>
    </message>
    <message>
        <source>The degradation ladder&apos;s rung that answered; a dash for the chosen model</source>
        <translation>作答的降级阶梯级别；破折号表示所选模型本身</translation>
    </message>
    <message>
        <source>Time until the first streamed event went to the client</source>
        <translation>第一个流式事件发送给客户端之前的时间</translation>
    </message>
    <message>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Route</source>
        <translation>路由</translation>
    </message>
    <message>
        <source>Tier</source>
        <translation>层级</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>提供方</translation>
    </message>
    <message>
        <source>Attempts</source>
        <translation>尝试次数</translation>
    </message>
    <message>
        <source>Degraded</source>
        <translation>降级</translation>
    </message>
    <message>
        <source>Latency</source>
        <translation>延迟</translation>
    </message>
    <message>
        <source>TTFT</source>
        <translation>首字节时间</translation>
    </message>
    <message>
        <source>Tokens</source>
        <translation>令牌</translation>
    </message>
    <message>
        <source>Request id</source>
        <translation>请求 ID</translation>
    </message>
    <message>
        <source>Input tokens → output tokens, as the provider reported them; ≈ marks an estimate from the text when it reported none</source>
        <translation>输入令牌 → 输出令牌（以提供方报告为准）；提供方未报告时按文本估算，以 ≈ 标出</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::TraceWaterfallView</name>
    <message>
        <source>attempt %1 · %2</source>
        <translation>第 %1 次尝试 · %2</translation>
    </message>
    <message>
        <source>success</source>
        <translation>成功</translation>
    </message>
    <message>
        <source>failure</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>rate limited</source>
        <translation>限流</translation>
    </message>
    <message>
        <source>unusable</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>request fault</source>
        <translation>请求错误</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <source>%1 µs</source>
        <translation>%1 微秒</translation>
    </message>
    <message>
        <source>%1 ms</source>
        <translation>%1 毫秒</translation>
    </message>
    <message>
        <source>%1 s</source>
        <translation>%1 秒</translation>
    </message>
    <message>
        <source>HTTP %1</source>
        <translation>HTTP %1</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>%1 %2 — %3</source>
        <translation>%1 %2 — %3</translation>
    </message>
    <message>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <source>at %1</source>
        <translation>于 %1</translation>
    </message>
    <message>
        <source>for %1</source>
        <translation>持续 %1</translation>
    </message>
    <message>
        <source>still running</source>
        <translation>仍在运行</translation>
    </message>
    <message>
        <source>%1 as %2: %3</source>
        <translation>%1，模型 %2：%3</translation>
    </message>
    <message>
        <source>%1 bytes received</source>
        <translation>已接收 %1 字节</translation>
    </message>
    <message numerus="yes">
        <source>%n chunk(s) streamed, %1 bytes</source>
        <translation>
            <numerusform>已流式传输 %n 个分块，共 %1 字节</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <source>The first %n arrivals are drawn; later ones are only counted.</source>
        <translation>
            <numerusform>仅绘制前 %n 次到达，之后的只计数。</numerusform>
        </translation>
    </message>
    <message>
        <source>Gap between chunks: median %1, max %2</source>
        <translation>分块间隔：中位数 %1，最大 %2</translation>
    </message>
    <message numerus="yes">
        <source>stream · %n chunk(s)</source>
        <translation>
            <numerusform>流 · %n 个分块</numerusform>
        </translation>
    </message>
    <message>
        <source>stream · no chunks yet</source>
        <translation>流 · 尚无分块</translation>
    </message>
    <message>
        <source>not streamed</source>
        <translation>非流式</translation>
    </message>
    <message>
        <source>wait</source>
        <translation>等待</translation>
    </message>
    <message>
        <source>event</source>
        <translation>事件</translation>
    </message>
    <message>
        <source>chunk</source>
        <translation>分块</translation>
    </message>
    <message>
        <source>gaps: median %1 · max %2</source>
        <translation>间隔：中位数 %1 · 最大 %2</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::TracesPage</name>
    <message>
        <source>Copied to the clipboard</source>
        <translation>已复制到剪贴板</translation>
    </message>
    <message>
        <source>Requests</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>Filter</source>
        <translation>筛选</translation>
    </message>
    <message>
        <source>All statuses</source>
        <translation>全部状态</translation>
    </message>
    <message>
        <source>All providers</source>
        <translation>全部提供方</translation>
    </message>
    <message>
        <source>All routes</source>
        <translation>全部路由</translation>
    </message>
    <message>
        <source>All tenants</source>
        <translation>全部租户</translation>
    </message>
    <message>
        <source>Errors only</source>
        <translation>仅错误</translation>
    </message>
    <message>
        <source>&amp;Slower than</source>
        <translation>慢于(&amp;S)</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> 毫秒</translation>
    </message>
    <message>
        <source>any latency</source>
        <translation>任意延迟</translation>
    </message>
    <message>
        <source>Show only requests that took longer than this; 0 shows all</source>
        <translation>只显示耗时超过此值的请求；0 表示全部显示</translation>
    </message>
    <message>
        <source>Search request id…</source>
        <translation>搜索请求 ID…</translation>
    </message>
    <message>
        <source>Jump to the top and show new requests as they arrive</source>
        <translation>跳到顶部并在新请求到达时显示</translation>
    </message>
    <message>
        <source>Select a request to see its waterfall, the routing decision and its text as it streams.</source>
        <translation>选择一个请求，查看其瀑布图、路由决策以及流式输出的文本。</translation>
    </message>
    <message>
        <source>Waterfall · ms from the request&apos;s start</source>
        <translation>瀑布图 · 自请求开始的毫秒数</translation>
    </message>
    <message>
        <source>Routing decision</source>
        <translation>路由决策</translation>
    </message>
    <message>
        <source>Live text</source>
        <translation>实时文本</translation>
    </message>
    <message>
        <source>Request</source>
        <translation>请求</translation>
    </message>
    <message>
        <source>Response</source>
        <translation>响应</translation>
    </message>
    <message>
        <source>Copy as curl</source>
        <translation>复制为 curl</translation>
    </message>
    <message>
        <source>Copy a curl command that sends this request to the gateway again; the API key is left as $OPENAI_API_KEY</source>
        <translation>复制一条将此请求再次发送到网关的 curl 命令；API 密钥保留为 $OPENAI_API_KEY</translation>
    </message>
    <message>
        <source>No text yet.</source>
        <translation>尚无文本。</translation>
    </message>
    <message numerus="yes">
        <source>↑ %n new</source>
        <translation>
            <numerusform>↑ %n 条新请求</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 shown · %2 running · the list keeps the newest %3</source>
        <translation>显示 %1 条 · %2 条运行中 · 列表保留最新的 %3 条</translation>
    </message>
    <message>
        <source>%1 older let go</source>
        <translation>已舍弃 %1 条较早的请求</translation>
    </message>
    <message>
        <source>paused while you look</source>
        <translation>查看期间已暂停</translation>
    </message>
    <message>
        <source>route %1</source>
        <translation>路由 %1</translation>
    </message>
    <message>
        <source>default</source>
        <translation>默认</translation>
    </message>
    <message>
        <source>tenant %1</source>
        <translation>租户 %1</translation>
    </message>
    <message>
        <source>%1 so far</source>
        <translation>目前 %1</translation>
    </message>
    <message>
        <source>%1 in all</source>
        <translation>共 %1</translation>
    </message>
    <message>
        <source>TTFT %1</source>
        <translation>首字节 %1</translation>
    </message>
    <message>
        <source>%1 → %2 tokens</source>
        <translation>%1 → %2 个令牌</translation>
    </message>
    <message>
        <source>the engine no longer keeps this trace</source>
        <translation>引擎已不再保留此追踪</translation>
    </message>
    <message>
        <source>Deciding…</source>
        <translation>正在决策…</translation>
    </message>
    <message>
        <source>No routing decision: the request ended before one was made.</source>
        <translation>无路由决策：请求在决策前已结束。</translation>
    </message>
    <message>
        <source>Waiting for the first chunk…</source>
        <translation>正在等待第一个分块…</translation>
    </message>
    <message>
        <source>Not streamed: the answer arrives whole.</source>
        <translation>非流式：回答将一次性到达。</translation>
    </message>
    <message>
        <source>The answer had no text.</source>
        <translation>回答没有文本。</translation>
    </message>
    <message>
        <source>The answer&apos;s text was not kept. Select a request while it streams to watch its text, or set trace.keep_bodies: true to keep every answer.</source>
        <translation>未保留回答的文本。请在请求流式传输时选择它以实时查看文本，或设置 trace.keep_bodies: true 以保留所有回答。</translation>
    </message>
    <message>
        <source>Error the client saw: %1</source>
        <translation>客户端收到的错误：%1</translation>
    </message>
    <message>
        <source>Finished: %1</source>
        <translation>已结束：%1</translation>
    </message>
    <message numerus="yes">
        <source>Streaming · %n event(s) so far</source>
        <translation>
            <numerusform>流式传输中 · 目前 %n 个事件</numerusform>
        </translation>
    </message>
    <message>
        <source>text since you selected it</source>
        <translation>自选中时起的文本</translation>
    </message>
    <message>
        <source>Bodies are not kept for this request. Set trace.keep_bodies: true in the configuration to keep request and response bodies (up to trace.body_max_bytes each) in new traces.</source>
        <translation>此请求未保留正文。在配置中设置 trace.keep_bodies: true，新的追踪将保留请求和响应正文（每个最多 trace.body_max_bytes）。</translation>
    </message>
    <message>
        <source>(cut at the trace&apos;s body limit)</source>
        <translation>（已按追踪的正文上限截断）</translation>
    </message>
    <message>
        <source>The response is kept when the request finishes.</source>
        <translation>响应将在请求结束时保留。</translation>
    </message>
    <message>
        <source>key %1</source>
        <extracomment>%1 the id of the client API key that authenticated the request</extracomment>
        <translation>密钥 %1</translation>
    </message>
    <message>
        <source>cost %1</source>
        <extracomment>%1 what the request cost, in US dollars</extracomment>
        <translation>花费 %1</translation>
    </message>
    <message>
        <source>%1 cached, %2 written to the cache</source>
        <extracomment>%1 input tokens read from the provider&apos;s prompt cache; %2 written to it</extracomment>
        <translation>缓存命中 %1，写入缓存 %2</translation>
    </message>
    <message>
        <source>%1 cached</source>
        <extracomment>%1 input tokens read from the provider&apos;s prompt cache</extracomment>
        <translation>缓存命中 %1</translation>
    </message>
    <message>
        <source>cost %1, saved %2</source>
        <extracomment>%1 what the request cost; %2 what the prompt cache saved, both in US dollars</extracomment>
        <translation>花费 %1，节省 %2</translation>
    </message>
    <message>
        <source>cost %1, %2 more for cache writes</source>
        <extracomment>%1 what the request cost; %2 what writing the prompt cache cost beyond what reading it saved, both in US dollars</extracomment>
        <translation>花费 %1，缓存写入多花 %2</translation>
    </message>
    <message>
        <source>response cache hit, saved %1</source>
        <extracomment>%1 what the kept answer cost when a provider made it, in US dollars</extracomment>
        <translation>响应缓存命中，节省 %1</translation>
    </message>
</context>
<context>
    <name>switchyard::ui::UsagePage</name>
    <message>
        <source>Usage and cost</source>
        <translation>用量与费用</translation>
    </message>
    <message>
        <source>&amp;Range</source>
        <translation>范围(&amp;R)</translation>
    </message>
    <message>
        <source>Today</source>
        <translation>今天</translation>
    </message>
    <message>
        <source>Last 7 days</source>
        <translation>最近 7 天</translation>
    </message>
    <message>
        <source>Last 30 days</source>
        <translation>最近 30 天</translation>
    </message>
    <message>
        <source>&amp;By</source>
        <translation>按(&amp;B)</translation>
    </message>
    <message>
        <source>Tenant</source>
        <translation>租户</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Top spenders today</source>
        <translation>今日花费最多</translation>
    </message>
    <message>
        <source>Budgets</source>
        <translation>预算</translation>
    </message>
    <message>
        <source>(no tenant)</source>
        <translation>（无租户）</translation>
    </message>
    <message>
        <source>(no model)</source>
        <translation>（无模型）</translation>
    </message>
    <message>
        <source>Other</source>
        <translation>其他</translation>
    </message>
    <message>
        <source>per hour, UTC</source>
        <translation>每小时，UTC</translation>
    </message>
    <message>
        <source>per day, UTC</source>
        <translation>每天，UTC</translation>
    </message>
    <message>
        <source>Spend (USD) %1</source>
        <translation>花费（美元）%1</translation>
    </message>
    <message>
        <source>Tokens (input + output) %1</source>
        <translation>令牌（输入 + 输出）%1</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt;&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%2 → %3 tokens&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%4 requests&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%5 estimated</source>
        <extracomment>%1 spend; %2 input tokens; %3 output tokens; %4 requests; %5 share of estimated requests</extracomment>
        <translation>&lt;b&gt;%1&lt;/b&gt;&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%2 → %3 个令牌&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%4 个请求&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%5 为估算</translation>
    </message>
    <message numerus="yes">
        <source>%n request(s) in this range used a model without a price in `pricing`: they count as free.</source>
        <translation>
            <numerusform>此范围内有 %n 个请求使用了 `pricing` 中没有价格的模型：按免费计。</numerusform>
        </translation>
    </message>
    <message>
        <source>None configured: add `budgets` to the config to refuse a tenant or key that has spent its day&apos;s or month&apos;s limit.</source>
        <translation>尚未配置：在配置中添加 `budgets`，即可拒绝已用完当日或当月额度的租户或密钥。</translation>
    </message>
    <message>
        <source>Spend per UTC day or month; a budget used up refuses its tenant or key with 429 until it resets.</source>
        <translation>按 UTC 日或月统计花费；预算用完后，其租户或密钥的请求将被 429 拒绝，直到预算重置。</translation>
    </message>
    <message>
        <source>today</source>
        <translation>今天</translation>
    </message>
    <message>
        <source>this month</source>
        <translation>本月</translation>
    </message>
    <message>
        <source>&lt;b&gt;%1&lt;/b&gt; %2: %3 of %4 (%5)</source>
        <extracomment>%1 budget name; %2 &quot;today&quot; or &quot;this month&quot;; %3 spent; %4 limit; %5 used share</extracomment>
        <translation>&lt;b&gt;%1&lt;/b&gt; %2：%3 / %4（%5）</translation>
    </message>
    <message>
        <source>Resets at %1</source>
        <translation>重置时间 %1</translation>
    </message>
    <message>
        <source>The usage ledger is written again.</source>
        <translation>用量账本已恢复写入。</translation>
    </message>
    <message>
        <source>The usage ledger cannot be written: %1. Traffic is served; %2 row(s) wait in memory (at most %3) and writing is retried.</source>
        <translation>用量账本无法写入：%1。流量照常服务；%2 行在内存中等待（最多 %3 行），并会重试写入。</translation>
    </message>
    <message>
        <source>%1 row(s) were dropped beyond that limit and are lost.</source>
        <translation>超出该上限的 %1 行已被丢弃并丢失。</translation>
    </message>
    <message>
        <source>Prompt-cache savings: &lt;b&gt;%1&lt;/b&gt;, as cache writes cost more than the reads saved&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%2</source>
        <extracomment>%1 a negative amount of US dollars; %2 the prompt cache&apos;s reads and writes</extracomment>
        <translation>提示缓存节省：&lt;b&gt;%1&lt;/b&gt;，因缓存写入的花费超过读取所节省的金额&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%2</translation>
    </message>
    <message>
        <source>Prompt-cache savings: &lt;b&gt;%1&lt;/b&gt;&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%2</source>
        <extracomment>%1 US dollars; %2 the prompt cache&apos;s reads and writes</extracomment>
        <translation>提示缓存节省：&lt;b&gt;%1&lt;/b&gt;&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;%2</translation>
    </message>
    <message>
        <source>Prompt-cache savings: what the input tokens read from or written to a provider&apos;s cache would have cost at the input price, less what they cost. A model without `cache_read_per_million` or `cache_write_per_million` in `pricing` claims none.</source>
        <translation>提示缓存节省：从提供方缓存读取或写入的输入令牌按输入价格本应花费的金额，减去其实际花费。未在 `pricing` 中设置 `cache_read_per_million` 或 `cache_write_per_million` 的模型不计节省。</translation>
    </message>
    <message>
        <source>Tenants by spend since 00:00 UTC. &quot;Estimated&quot; is the share of requests whose tokens the provider did not report; a spend&apos;s tooltip gives what the prompt cache saved.</source>
        <translation>自 UTC 00:00 起按花费排列的租户。“估算”是提供方未报告令牌数的请求所占比例；将鼠标停在花费上可查看提示缓存节省的金额。</translation>
    </message>
    <message>
        <source>This node only: %1</source>
        <translation>仅本节点：%1</translation>
    </message>
    <message>
        <source>The whole fleet: this node and %1</source>
        <extracomment>%1 the names of the fleet&apos;s other nodes, comma-separated</extracomment>
        <translation>整个集群：本节点及 %1</translation>
    </message>
    <message>
        <source>Response-cache savings: &lt;b&gt;%1&lt;/b&gt;&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;hit ratio %2 (%3 of %4 lookups)</source>
        <extracomment>%1 US dollars; %2 a percentage; %3 requests answered from the cache; %4 looked up</extracomment>
        <translation>响应缓存节省：&lt;b&gt;%1&lt;/b&gt;&amp;nbsp;&amp;nbsp;·&amp;nbsp;&amp;nbsp;命中率 %2（%4 次查找中命中 %3 次）</translation>
    </message>
    <message>
        <source>Response-cache savings: what the answers given again from the response cache cost when a provider made them. A hit calls no provider and costs nothing; the hit ratio counts the requests on routes and models with `cache:` that were looked up.</source>
        <translation>响应缓存节省：从响应缓存再次给出的回答当初由提供方生成时的花费。命中不调用任何提供方，也不产生费用；命中率统计的是在带有 `cache:` 的路由和模型上查找过缓存的请求。</translation>
    </message>
</context>
</TS>
