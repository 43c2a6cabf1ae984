#pragma once

#include "json/json_path.h"
#include "json/json_template.h"
#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>
#include <optional>

namespace switchyard::config {

// `anthropic:` of an anthropic provider. The key comes from `api_key_env` and goes in x-api-key
// unless the provider's `api_key_header` says otherwise.
struct AnthropicSettings {
    QString version = QStringLiteral("2023-06-01"); // the anthropic-version header
    int maxTokens = 4096; // max_tokens when the request sets neither max_tokens nor
                          // max_completion_tokens: the Messages API requires one
    QStringList betas;    // anthropic-beta header values, joined with commas; none by default
};

// Where token counts are in a mapped provider's answer or stream events.
struct MappedUsagePaths {
    std::optional<json::JsonPath> promptTokens;
    std::optional<json::JsonPath> completionTokens;
};

// `mapping.stream:` of a mapped provider that can stream. Without it, a streamed client request
// is sent to the provider unstreamed and its answer replayed as chunks.
struct MappedStreamConfig {
    bool enabled = false;
    QString path;                       // request path when streaming; empty: `path`
    json::JsonPath delta;               // the text piece in each event; `$` for the
                                        // event's data taken as plain text
    std::optional<json::JsonPath> done; // an event where this is true ends it
    QByteArray doneData;                // an event whose data is exactly this ends it
    std::optional<json::JsonPath> finishReason;
    MappedUsagePaths usage;
    std::optional<json::JsonPath> error; // an event with this is an error event

    // Without a done signal, the end of the response is the end of the answer (and a cut
    // stream cannot be told from a finished one).
    bool hasDoneSignal() const { return done.has_value() || !doneData.isEmpty(); }
};

// `mapping:` of a mapped provider: an in-house agent with its own JSON, described in the file
// rather than in code (docs/adapters.md, "Mapped providers").
struct MappingConfig {
    // The older `headers`, `api_key_header` and `api_key_prefix` of a mapping fill the provider's
    // own fields of the same names (ProviderConfig::headers...).
    QString path;                  // appended to base_url; empty: base_url as is
    json::RequestTemplate request; // the body, from the OpenAI request
    json::JsonPath answer;         // the reply text in a whole answer
    std::optional<json::JsonPath> finishReason;
    MappedUsagePaths usage;
    std::optional<json::JsonPath> error; // the message in an error answer
    MappedStreamConfig stream;
};

// How to speak to an anthropic or mapped provider, as parsed from its entry in the file.
// Filled by checkProviderAdapter (adapter_section.cpp); the paths and templates are compiled
// there, so a request never parses them again.
struct AdapterConfig {
    AnthropicSettings anthropic; // kind anthropic
    MappingConfig mapping;       // kind mapped
};

} // namespace switchyard::config
