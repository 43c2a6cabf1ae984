#include "config/config_sections.h"

#include <QSet>

namespace switchyard::config {

using namespace Qt::StringLiterals;

namespace {

const QList<QLatin1StringView> pricingKeys{"currency"_L1, "models"_L1};
const QList<QLatin1StringView> priceKeys{"input_per_million"_L1, "output_per_million"_L1,
                                         "cache_read_per_million"_L1, "cache_write_per_million"_L1};
const QList<QLatin1StringView> budgetKeys{"name"_L1, "tenant"_L1, "key"_L1, "daily_usd"_L1,
                                          "monthly_usd"_L1};

// A price is dollars per million tokens: zero is a real price (a local model), a negative one is
// a typo, and a million dollars per million tokens is beyond any provider's list.
constexpr double kHighestPricePerMillion = 1'000'000.0;

// A price that is written; nullopt when it is not, or is wrong (reported).
std::optional<double> readPrice(YamlReader &reader, const MapEntry &entry)
{
    const std::optional<double> value = reader.readNumber(entry);
    if (!value)
        return std::nullopt;
    if (*value < 0.0 || *value > kHighestPricePerMillion) {
        reader.reportValue(entry, u"`%1` must be from 0 to 1000000 US dollars per million "
                                  u"tokens, got %2"_s.arg(entry.name, describe(entry.value)));
        return std::nullopt;
    }
    return value;
}

// Reads each price `price` has into `read`; false when one is wrong (reported).
bool readPrices(YamlReader &reader, const KeyedMap &price, ModelPrice &read)
{
    bool ok = true;
    const auto take = [&](QLatin1StringView name, auto &into) {
        const MapEntry *entry = price.find(name);
        if (!entry)
            return;
        if (const std::optional<double> value = readPrice(reader, *entry))
            into = *value;
        else
            ok = false;
    };
    take("input_per_million"_L1, read.inputPerMillionUsd);
    take("output_per_million"_L1, read.outputPerMillionUsd);
    take("cache_read_per_million"_L1, read.cacheReadPerMillionUsd);
    take("cache_write_per_million"_L1, read.cacheWritePerMillionUsd);
    return ok;
}

void checkPricing(YamlReader &reader, const MapEntry &entry, const Config &config,
                  PricingConfig &pricing)
{
    const std::optional<KeyedMap> section = reader.readSection(entry, pricingKeys);
    if (!section)
        return;
    if (const MapEntry *currency = section->find("currency"_L1)) {
        // Every cost, budget and report is in US dollars; the key exists so a file says so.
        if (const auto text = reader.readString(*currency); text && *text != u"USD"_s)
            reader.reportValue(*currency, u"`currency` must be `USD`, the one currency prices, "
                                          u"costs and budgets are kept in; got %1"_s.arg(
                                              describe(currency->value)));
    }
    const MapEntry *models = section->find("models"_L1);
    if (!models)
        return;
    if (!models->value.IsMap()) {
        reader.reportValue(*models,
                           u"`models` must map model names to prices such as "
                           u"`{input_per_million: 2.5, output_per_million: 10}`, got %1"_s.arg(
                               describe(models->value)));
        return;
    }
    QStringList served;
    for (const ProviderConfig &provider : config.providers) {
        for (const ModelRoute &model : provider.models)
            served.append(model.publicName);
    }
    QList<QLatin1StringView> servedViews; // closestKey() takes views of the served names
    QList<QByteArray> servedLatin1;
    for (const QString &name : served)
        servedLatin1.append(name.toLatin1());
    for (const QByteArray &name : servedLatin1)
        servedViews.append(QLatin1StringView(name));
    QHash<QString, int> firstLines;
    for (auto it = models->value.begin(); it != models->value.end(); ++it) {
        const YAML::Node key = it->first;
        if (!key.IsScalar() || key.Scalar().empty()) {
            reader.report(key.Mark(),
                          u"a model name must be plain text, got %1"_s.arg(describe(key)));
            continue;
        }
        const QString model = fromYaml(key.Scalar());
        const int line = reader.locate(key.Mark()).line;
        if (const auto first = firstLines.constFind(model); first != firstLines.cend()) {
            reader.report(key.Mark(), u"duplicate price for model `%1` (first at line %2)"_s.arg(
                                          model, QString::number(first.value())));
            continue;
        }
        firstLines.insert(model, line);
        // A price for a name no provider serves is most likely a typo: it would never apply.
        if (!config.providers.isEmpty() && !served.contains(model)) {
            const QString suggestion = closestKey(model, servedViews);
            reader.report(key.Mark(),
                          suggestion.isEmpty()
                              ? u"no provider serves model `%1`; prices are by the model name "
                                u"clients ask for"_s.arg(model)
                              : u"no provider serves model `%1` (did you mean `%2`?)"_s.arg(
                                    model, suggestion));
            continue;
        }
        const MapEntry priceEntry{model, key, it->second};
        if (!it->second.IsMap()) {
            reader.reportValue(priceEntry,
                               u"the price of `%1` must be a map with `input_per_million` and "
                               u"`output_per_million`, got %2"_s.arg(model, describe(it->second)));
            continue;
        }
        const qsizetype errorsBefore = reader.errorCount();
        const KeyedMap price = reader.readKeys(it->second, priceKeys);
        if (reader.errorCount() != errorsBefore)
            continue;
        if (!price.find("input_per_million"_L1) && !price.find("output_per_million"_L1)) {
            reader.report(it->second.Mark(),
                          u"the price of `%1` needs `input_per_million`, `output_per_million` "
                          u"or both"_s.arg(model));
            continue;
        }
        ModelPrice read;
        if (!readPrices(reader, price, read))
            continue;
        pricing.models.insert(model, read);
    }
}

// A spending limit: more than zero (a zero budget is a disabled tenant, which keys do better) and
// below a billion dollars, beyond which it is a typo.
std::optional<double> readLimit(YamlReader &reader, const MapEntry &entry)
{
    const std::optional<double> value = reader.readNumber(entry);
    if (!value)
        return std::nullopt;
    if (*value <= 0.0 || *value > 1e9) {
        reader.reportValue(entry, u"`%1` must be more than 0 US dollars, got %2"_s.arg(
                                      entry.name, describe(entry.value)));
        return std::nullopt;
    }
    return value;
}

void checkBudgets(YamlReader &reader, const MapEntry &entry, QList<BudgetConfig> &budgets)
{
    if (!entry.value.IsSequence()) {
        reader.reportValue(
            entry, u"`budgets` must be a list of entries such as "
                   u"`{tenant: team-a, daily_usd: 20}`, got %1"_s.arg(describe(entry.value)));
        return;
    }
    QHash<QString, int> firstLines; // "tenant X" / "key X" and names: one budget each
    int position = 0;
    for (const YAML::Node &node : entry.value) {
        ++position;
        if (!node.IsMap()) {
            reader.report(node.IsNull() ? entry.value.Mark() : node.Mark(),
                          u"entry %1 of `budgets` must be a map, got %2"_s.arg(
                              QString::number(position), describe(node)));
            continue;
        }
        const qsizetype errorsBefore = reader.errorCount();
        const KeyedMap keys = reader.readKeys(node, budgetKeys);
        if (reader.errorCount() != errorsBefore)
            continue; // an unknown key is likely a misspelt limit: no follow-on errors
        BudgetConfig budget;
        const MapEntry *tenant = keys.find("tenant"_L1);
        const MapEntry *key = keys.find("key"_L1);
        if (tenant && key) {
            reader.report(key->key.Mark(), u"a budget is for a `tenant` or for a `key`, not both; "
                                           u"write two entries"_s);
            continue;
        }
        if (!tenant && !key) {
            reader.report(node.Mark(), u"budget entry %1 needs `tenant` or `key`"_s.arg(position));
            continue;
        }
        const MapEntry &subject = tenant ? *tenant : *key;
        budget.scope = tenant ? BudgetConfig::Scope::Tenant : BudgetConfig::Scope::Key;
        if (const auto text = reader.readString(subject)) {
            if (text->isEmpty())
                reader.reportValue(subject, u"`%1` must not be empty"_s.arg(subject.name));
            budget.subject = *text;
        }
        budget.name = u"%1 %2"_s.arg(subject.name, budget.subject);
        if (const MapEntry *name = keys.find("name"_L1)) {
            if (const auto text = reader.readString(*name)) {
                if (text->isEmpty())
                    reader.reportValue(*name, u"`name` must not be empty"_s);
                budget.name = *text;
            }
        }
        const MapEntry *daily = keys.find("daily_usd"_L1);
        const MapEntry *monthly = keys.find("monthly_usd"_L1);
        if (!daily && !monthly) {
            reader.report(node.Mark(), u"budget `%1` needs `daily_usd`, `monthly_usd` or "
                                       u"both"_s.arg(budget.name));
            continue;
        }
        if (daily)
            budget.dailyUsd = readLimit(reader, *daily);
        if (monthly)
            budget.monthlyUsd = readLimit(reader, *monthly);
        if (reader.errorCount() != errorsBefore)
            continue;
        const int line = reader.locate(node.Mark()).line;
        const QString subjectKey = u"%1 %2"_s.arg(subject.name, budget.subject);
        for (const QString &identity : {subjectKey, u"name "_s + budget.name}) {
            if (const auto first = firstLines.constFind(identity); first != firstLines.cend()) {
                reader.report(node.Mark(),
                              identity == subjectKey
                                  ? u"a second budget for %1 (first at line %2); put "
                                    u"`daily_usd` and `monthly_usd` in one entry"_s.arg(
                                        subjectKey, QString::number(first.value()))
                                  : u"a second budget named `%1` (first at line %2)"_s.arg(
                                        budget.name, QString::number(first.value())));
                break;
            }
        }
        if (reader.errorCount() != errorsBefore)
            continue;
        firstLines.insert(subjectKey, line);
        firstLines.insert(u"name "_s + budget.name, line);
        budgets.append(std::move(budget));
    }
}

} // namespace

QList<QLatin1StringView> usageRootKeys()
{
    return {"pricing"_L1, "budgets"_L1};
}

void checkUsageSections(YamlReader &reader, const KeyedMap &root, Config &config)
{
    if (const MapEntry *pricing = root.find("pricing"_L1))
        checkPricing(reader, *pricing, config, config.usage.pricing);
    if (const MapEntry *budgets = root.find("budgets"_L1))
        checkBudgets(reader, *budgets, config.usage.budgets);
}

} // namespace switchyard::config
