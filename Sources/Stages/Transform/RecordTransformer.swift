import Formulas
import JSON

/// The steps of a `transform` applied to one record, in the SPEC's order: `rename`, `map`, `set`,
/// `where`, `reject`, `mask`, then `drop` / `keep` and `sobjectType`. Pure: no I/O, so records
/// can be transformed on any core.
struct RecordTransformer: Sendable {
    enum Outcome {
        case record(JSONObject)
        /// `where` was not true.
        case filtered
        /// A reject rule held, a map refused the value, or a formula failed: the reason.
        case rejected(String)
    }

    struct RejectRule: Sendable {
        var condition: Formula
        var reason: String
    }

    var renames: [(from: String, to: String)] = []
    var maps: [ValueMap] = []
    var sets: [(field: String, formula: Formula)] = []
    var condition: Formula?
    var rejectRules: [RejectRule] = []
    var masks: [(field: String, kind: ValueMasker.Kind)] = []
    var masker: ValueMasker?
    var drop: Set<String> = []
    var keep: Set<String>?
    var sobjectType: String?
    /// Fields the steps may add to a record (`set`, `lookups`): room is made for them once, before
    /// the first step writes — and for those a `stage` adds, so a record grows once on its way.
    var addedFields = 0

    /// The record after every step, or why it is passed over (a transform without lookups). The
    /// record is taken and worked on in place (inside the formulas' environment) — not copied when
    /// the caller held the only reference — and a rejected one is given back as it came, for the
    /// rejects file: from `undo`, or from a copy kept when `rename` moves members.
    func apply(_ record: inout JSONObject, now: Int64, undo: inout RecordUndo) -> Outcome {
        let original = renames.isEmpty ? nil : record
        undo.start(record)
        var environment = FormulaEnvironment(record: JSONObject(), now: now)
        swap(&environment.record, &record)
        let outcome: Outcome
        if let reason = reshape(&environment, undo: &undo) { outcome = .rejected(reason) } else { outcome = finish(&environment) }
        if case .rejected = outcome {
            if let original { record = original } else {
                undo.restore(&environment.record)
                swap(&environment.record, &record)
            }
        }
        return outcome
    }

    /// The steps before `lookups`: `rename`, `map`, `set`; why the record is rejected, if it is.
    /// What a map or a formula replaced is noted in `undo`.
    func reshape(_ environment: inout FormulaEnvironment, undo: inout RecordUndo) -> String? {
        if addedFields > 0 { environment.record.reserveCapacity(environment.record.count + addedFields + SoupStagingStage.fieldsAdded) }
        for (from, to) in renames {
            guard let value = environment.record[from] else { continue }
            environment.record[from] = nil
            environment.record[to] = value
        }
        for map in maps {
            switch map.apply(to: environment.record[map.field], in: environment) {
            case .unchanged: break
            case .value(let value): undo.write(value, to: map.field, in: &environment.record)
            case .rejected(let reason): return reason
            }
        }
        for (field, formula) in sets {
            do throws(FormulaEvaluationError) {
                let value = try formula.evaluate(in: environment)
                if value.isBlank && environment.record[field] == nil { continue }
                undo.write(value.json, to: field, in: &environment.record)
            } catch {
                return "set.\(field): \(error.message)"
            }
        }
        return nil
    }

    /// The steps after `lookups`: `where`, `reject`, `mask`, `drop` / `keep`, `sobjectType`. The
    /// environment's record is taken.
    func finish(_ environment: inout FormulaEnvironment) -> Outcome {
        if let condition {
            do throws(FormulaEvaluationError) {
                if try !condition.holds(in: environment) { return .filtered }
            } catch {
                return .rejected("where: \(error.message)")
            }
        }
        for (index, rule) in rejectRules.enumerated() {
            do throws(FormulaEvaluationError) {
                if try rule.condition.holds(in: environment) { return .rejected(rule.reason) }
            } catch {
                return .rejected("reject[\(index)].when: \(error.message)")
            }
        }
        var record = environment.record
        environment.record = JSONObject()
        if let masker {
            for (field, kind) in masks {
                guard let value = record[field] else { continue }
                record[field] = masker.mask(value, as: kind)
            }
        }
        if let keep {
            var kept = JSONObject()
            kept.reserveCapacity(keep.count + 1)
            for (key, value) in record where key == "attributes" || keep.contains(key) { kept[key] = value }
            record = kept
        } else {
            for field in drop { record[field] = nil }
        }
        if let sobjectType {
            var attributes = record["attributes"]?.objectValue ?? JSONObject()
            attributes["type"] = .string(sobjectType)
            record["attributes"] = .object(attributes)
        }
        return .record(record)
    }
}

/// What `reshape` did to a record, undone to give a rejected record back as it came: the members
/// it had (later ones were appended) and each value replaced. Members moved by `rename` are not
/// covered (a copy is kept then). Reused from record to record, so it allocates once.
struct RecordUndo {
    private var count = 0
    private var replaced: [(key: String, value: JSONValue)] = []

    /// Starts noting changes to `record`.
    mutating func start(_ record: JSONObject) {
        count = record.count
        replaced.removeAll(keepingCapacity: true)
    }

    /// Sets `field` of `record` to `value`, noting what it replaced.
    mutating func write(_ value: JSONValue, to field: String, in record: inout JSONObject) {
        if let old = record.replaceValue(value, forKey: field) { replaced.append((field, old)) }
    }

    /// Puts `record` back as it was at ``start(_:)``: replaced values restored, latest first, and
    /// appended members removed.
    func restore(_ record: inout JSONObject) {
        for (key, value) in replaced.reversed() { _ = record.replaceValue(value, forKey: key) }
        record.removeMembers(after: count)
    }
}
