<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
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
        <source>Up</source>
        <translation>正常</translation>
    </message>
    <message>
        <source>Degraded</source>
        <translation>降级</translation>
    </message>
    <message>
        <source>Down</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>%1 (%2%)</source>
        <translation>%1（%2%）</translation>
    </message>
    <message>
        <source>%1 (%2 provider)</source>
        <translation>%1（%2 类型提供商）</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>%1 failed calls since start; %2% of recent calls failed</source>
        <translation>启动以来失败调用 %1 次；最近调用中 %2% 失败</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>提供商</translation>
    </message>
    <message>
        <source>State</source>
        <translation>状态</translation>
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
        <source>Health as judged from recent calls; hover a row for the reason</source>
        <translation>根据最近调用判断的健康状态；鼠标悬停在行上可查看原因</translation>
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
        <source>Failed calls since start, and the failure rate over recent calls</source>
        <translation>启动以来失败的调用数，以及最近调用的失败率</translation>
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
        <source>%n consecutive call failure(s); last: %1</source>
        <translation>
            <numerusform>连续 %n 次调用失败；最近一次：%1</numerusform>
        </translation>
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
        <source>Hover a state for its reason; click a header to sort</source>
        <translation>悬停在状态上可查看原因；点击表头可排序</translation>
    </message>
    <message>
        <source>since start</source>
        <translation>自启动以来</translation>
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
        <source>across all providers</source>
        <translation>所有提供商合计</translation>
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
        <source>Starting the gateway…</source>
        <translation>正在启动网关…</translation>
    </message>
    <message>
        <source>Listening on %1  ·  OpenAI clients use http://%1/v1</source>
        <translation>正在监听 %1  ·  OpenAI 客户端请使用 http://%1/v1</translation>
    </message>
    <message>
        <source>%1 req/s</source>
        <translation>%1 请求/秒</translation>
    </message>
</context>
</TS>
