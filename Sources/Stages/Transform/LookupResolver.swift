import Connectors
import Formulas
import JSON
import SOQL

/// Resolves a transform's `lookups` a batch at a time: the distinct keys of the batch that no
/// earlier batch asked for go to the org in as few queries as the query length allows (values
/// escaped through the SOQL syntax tree), and each key's answer is kept for the rest of the run.
struct LookupResolver {
    /// What the org holds for one key.
    enum Resolution: Sendable {
        case id(String)
        case none
        case ambiguous(Int)
    }

    /// A key: its values as compared (text without case, as SOQL compares it) and as SOQL literals.
    private struct Key {
        var compared: [String]
        var literals: [SOQLValue]
    }

    let rules: [LookupRule]
    let client: any OrgClient
    /// Per rule, each key's answer (dropped whole past ``cacheLimit`` keys, so memory stays flat).
    private var known: [[[String]: Resolution]]
    /// Queries sent so far.
    private(set) var queries = 0

    static let cacheLimit = 200_000
    /// Characters of literals in one query: with the rest of the query, well inside the length of
    /// a URL the org accepts (16,384) once encoded.
    static let literalBudget = 4_000

    init(rules: [LookupRule], client: any OrgClient) {
        self.rules = rules
        self.client = client
        known = Array(repeating: [:], count: rules.count)
    }

    /// Sets each lookup's field on `records`, rule after rule (a later rule's keys may read an
    /// earlier one's field); returns why records are rejected, by position. Rejected records are
    /// left as they are and not looked at by later rules.
    mutating func apply(to records: inout [JSONObject], now: Int64) async throws -> [Int: String] {
        var rejected: [Int: String] = [:]
        for (ruleIndex, rule) in rules.enumerated() {
            // Each record's key as a position among the batch's distinct keys: -1 blank, -2 rejected.
            var slots = [Int](repeating: -2, count: records.count)
            var distinct: [Key] = []
            var positions: [[String]: Int] = [:]
            for index in records.indices where rejected[index] == nil {
                switch Self.key(of: records[index], rule, now: now) {
                case .success(let key?):
                    if let position = positions[key.compared] {
                        slots[index] = position
                    } else {
                        positions[key.compared] = distinct.count
                        slots[index] = distinct.count
                        distinct.append(key)
                    }
                case .success(nil): slots[index] = -1
                case .failure(let failure): rejected[index] = failure.reason
                }
            }
            try await fetch(distinct, rule: ruleIndex)
            let resolutions = distinct.map { known[ruleIndex][$0.compared] ?? Resolution.none }
            for index in records.indices where slots[index] != -2 {
                let slot = slots[index]
                settle(&records[index], rule, slot >= 0 ? resolutions[slot] : .none, key: slot >= 0 ? distinct[slot] : nil, now: now,
                       rejected: &rejected, at: index)
            }
        }
        return rejected
    }

    /// The record's key for `rule`; `nil` when a value is blank (it matches nothing).
    private static func key(of record: JSONObject, _ rule: LookupRule, now: Int64) -> Result<Key?, LookupFailure> {
        let environment = FormulaEnvironment(record: record, now: now)
        var key = Key(compared: [], literals: [])
        for (field, formula) in rule.match {
            let value: FormulaValue
            do throws(FormulaEvaluationError) {
                value = try formula.evaluate(in: environment)
            } catch {
                return .failure(LookupFailure("\(rule.name).match.\(field): \(error.message)"))
            }
            guard let literal = literal(value) else { return .success(nil) }
            key.compared.append(compared(value.json))
            key.literals.append(literal)
        }
        return .success(key)
    }

    /// Asks the org for the keys (distinct) of `rule` it was not asked for yet.
    private mutating func fetch(_ keys: [Key], rule ruleIndex: Int) async throws {
        var wanted = keys.filter { known[ruleIndex][$0.compared] == nil }
        guard !wanted.isEmpty else { return }
        if known[ruleIndex].count + wanted.count > Self.cacheLimit {
            // Memory stays flat: the answers are dropped, and this batch's keys all asked again.
            known[ruleIndex].removeAll(keepingCapacity: true)
            wanted = keys
        }
        var chunk: [Key] = []
        var size = 0
        for key in wanted.sorted(by: { $0.compared.lexicographicallyPrecedes($1.compared) }) {
            let cost = key.literals.reduce(0) { $0 + $1.description.utf8.count + 2 }
            if !chunk.isEmpty && size + cost > Self.literalBudget {
                try await query(chunk, rule: ruleIndex)
                chunk.removeAll(keepingCapacity: true)
                size = 0
            }
            chunk.append(key)
            size += cost
        }
        try await query(chunk, rule: ruleIndex)
    }

    /// One query for `keys`: each match field `IN` its values (a superset of the keys when there
    /// are several fields), the answers sorted out by key.
    private mutating func query(_ keys: [Key], rule ruleIndex: Int) async throws {
        let rule = rules[ruleIndex]
        let fields = rule.match.map(\.field)
        var query = try SOQLQuery(selecting: ["Id"] + fields.filter { $0.caseInsensitiveCompare("Id") != .orderedSame }, from: rule.sobjectType)
        if let condition = rule.condition { query.addFilter(condition) }
        for (position, field) in fields.enumerated() {
            var values: [SOQLValue] = []
            var seen = Set<SOQLValue>()
            for key in keys where seen.insert(key.literals[position]).inserted { values.append(key.literals[position]) }
            query.addFilter(.comparison(SOQLComparison(try SOQLFieldPath(field), .in, .list(values))))
        }
        var found: [[String]: [String]] = [:]
        queries += 1
        do {
            for try await record in client.query(query) {
                guard let id = record["Id"]?.stringValue else { continue }
                found[fields.map { Self.compared(record[$0] ?? .null) }, default: []].append(id)
            }
        } catch let error as OrgAPIError {
            throw StageFailure(.failed, "\(rule.name): the org refused the lookup query (\(error))")
        }
        for key in keys {
            let ids = found[key.compared] ?? []
            known[ruleIndex][key.compared] = ids.isEmpty ? Resolution.none : ids.count == 1 ? .id(ids[0]) : .ambiguous(ids.count)
        }
    }

    /// Sets the rule's field of one record from its key's answer, or rejects it.
    private func settle(_ record: inout JSONObject, _ rule: LookupRule, _ resolution: Resolution, key: Key?, now: Int64,
                        rejected: inout [Int: String], at index: Int) {
        switch resolution {
        case .id(let id):
            record[rule.field] = .string(id)
        case .ambiguous(let count):
            rejected[index] = "\(rule.name): \(count) \(rule.sobjectType) records have \(Self.describe(rule, key)) (ambiguous)"
        case .none:
            switch rule.otherwise {
            case .reject: rejected[index] = "\(rule.name): no \(rule.sobjectType) has \(Self.describe(rule, key))"
            case .null: record[rule.field] = .null
            case .keep: break
            case .value(let value): record[rule.field] = .string(value)
            case .formula(let formula):
                do throws(FormulaEvaluationError) {
                    record[rule.field] = try formula.evaluate(in: FormulaEnvironment(record: record, now: now)).json
                } catch {
                    rejected[index] = "\(rule.name).otherwise: \(error.message)"
                }
            }
        }
    }

    /// `Email = 'a@b.c' and IsActive = true`; a blank key names its fields as blank.
    private static func describe(_ rule: LookupRule, _ key: Key?) -> String {
        guard let key else { return "a blank " + rule.match.map(\.field).joined(separator: " or ") }
        return zip(rule.match, key.literals).map { "\($0.field) = \($1)" }.joined(separator: " and ")
    }

    /// A formula's value as a SOQL literal; `nil` for blank.
    private static func literal(_ value: FormulaValue) -> SOQLValue? {
        switch value {
        case .blank: return nil
        case .text(let text): return .string(text)
        case .number(let number): return number.rounded() == number && abs(number) < 9e15 ? .integer(Int64(number)) : .decimal(number)
        case .boolean(let flag): return .boolean(flag)
        case .date: return value.json.stringValue.flatMap(SOQLDate.init(parsing:)).map(SOQLValue.date)
        case .dateTime(let milliseconds): return SOQLDateTime(epochMilliseconds: milliseconds).map(SOQLValue.dateTime)
        }
    }

    /// A value as compared: text without case (SOQL's `=` on text ignores it), numbers as numbers.
    private static func compared(_ value: JSONValue) -> String {
        switch value {
        // Most keys have no capital letter: those are compared as they are, with no new string.
        case .string(let text): return text.utf8.contains { $0 >= 0x41 && $0 <= 0x5A || $0 >= 0x80 } ? text.lowercased() : text
        case .integer(let number): return String(Double(number))
        case .double(let number): return String(number)
        case .bool(let flag): return flag ? "true" : "false"
        case .null, .array, .object: return ""
        }
    }
}

/// Why a record's lookup key could not be computed.
struct LookupFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
