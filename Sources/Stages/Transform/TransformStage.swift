import Formulas
import Foundation
import JSON

/// `transform`: reshapes the records of its `from` datasets without code — `rename`, `map`,
/// `set` (Salesforce formulas), `lookups` (ids of org records found by key, in batched queries),
/// `where`, `reject`, `mask`, `drop` / `keep`, `sobjectType` — in that order, streaming. A record a reject rule, a map or a failing formula refuses goes to
/// `rejects/<stage id>.csv` with the reason and its source line; the rest go on.
public struct TransformStage: Stage {
    public static let typeName = "transform"
    public static let countKeys = [StageCounts.read, StageCounts.filtered, StageCounts.rejected]
    /// Reshaping again is cheaper than storing and reading back (a `--only` rerun of its reader
    /// queries its lookups again).
    public static let streamsToSoleReader = true

    let transformer: RecordTransformer
    let lookups: [LookupRule]

    public init(settings: StageSettings) throws {
        var transformer = RecordTransformer()
        for (from, to) in settings.object("rename") ?? JSONObject() {
            guard let target = to.stringValue, !target.isEmpty else {
                settings.report("rename.\(from)", "must be the new field name")
                continue
            }
            transformer.renames.append((from, target))
        }
        for (field, value) in settings.object("map") ?? JSONObject() {
            if let map = ValueMap(field: field, settings: value, stage: settings) { transformer.maps.append(map) }
        }
        // A field an earlier formula set has that formula's type for the formulas after it.
        var known: [String: FormulaType] = [:]
        for (field, value) in settings.object("set") ?? JSONObject() {
            guard let text = value.stringValue else {
                settings.report("set.\(field)", "must be a formula string (text constants in quotes: \"\\\"Legacy\\\"\")")
                continue
            }
            if let formula = Self.formula(text, at: "set.\(field)", settings, fieldTypes: known) {
                transformer.sets.append((field, formula))
                known[field] = formula.type
            }
        }
        lookups = LookupRule.rules(settings, fieldTypes: known)
        if let text = settings.string("where") {
            transformer.condition = Self.formula(text, at: "where", settings, condition: true, fieldTypes: known)
        }
        transformer.rejectRules = Self.rejectRules(settings, fieldTypes: known)
        (transformer.masks, transformer.masker) = Self.masking(settings)
        let drop = settings.strings("drop")
        let keep = settings.strings("keep")
        if drop != nil, keep != nil { settings.report("keep", "give either drop (the fields to remove) or keep (the only fields kept), not both") }
        transformer.drop = Set(drop ?? [])
        transformer.keep = keep.map(Set.init)
        transformer.sobjectType = settings.string("sobjectType")
        transformer.addedFields = transformer.sets.count + lookups.count
        self.transformer = transformer
    }

    /// Compiles a formula, reporting `path: column N: …`; a condition must give a boolean.
    static func formula(_ text: String, at path: String, _ settings: StageSettings, condition: Bool = false,
                        fieldTypes: [String: FormulaType] = [:]) -> Formula? {
        do throws(FormulaSyntaxError) {
            let formula = try Formula(text, fieldTypes: fieldTypes)
            if condition, formula.type != .boolean, formula.type != .any {
                settings.report(path, "must be a condition (true or false), not a \(formula.type) formula")
                return nil
            }
            return formula
        } catch {
            settings.report(path, error.description)
            return nil
        }
    }

    private static func rejectRules(_ settings: StageSettings, fieldTypes: [String: FormulaType]) -> [RecordTransformer.RejectRule] {
        guard let value = settings.value("reject") else { return [] }
        guard let array = value.arrayValue else {
            settings.report("reject", "must be an array of {\"when\": formula, \"reason\": text}")
            return []
        }
        var rules: [RecordTransformer.RejectRule] = []
        for (index, element) in array.enumerated() {
            let path = "reject[\(index)]"
            guard let object = element.objectValue, let when = object["when"]?.stringValue, let reason = object["reason"]?.stringValue, !reason.isEmpty else {
                settings.report(path, "must be {\"when\": formula, \"reason\": text}")
                continue
            }
            for key in object.keys where key != "when" && key != "reason" { settings.report("\(path).\(key)", "unknown key; expected when, reason") }
            if let formula = formula(when, at: "\(path).when", settings, condition: true, fieldTypes: fieldTypes) {
                rules.append(.init(condition: formula, reason: reason))
            }
        }
        return rules
    }

    private static func masking(_ settings: StageSettings) -> ([(field: String, kind: ValueMasker.Kind)], ValueMasker?) {
        let seed = settings.string("maskSeed")
        if seed?.isEmpty == true { settings.report("maskSeed", "is empty; set the variable it names, or leave maskSeed out for a random seed per run") }
        guard let object = settings.object("mask") else {
            if seed != nil { settings.report("maskSeed", "is set but nothing is masked (add \"mask\")") }
            return ([], nil)
        }
        var masks: [(field: String, kind: ValueMasker.Kind)] = []
        for (field, value) in object {
            guard let name = value.stringValue, let kind = ValueMasker.Kind(rawValue: name) else {
                settings.report("mask.\(field)", "must be one of \(ValueMasker.Kind.allCases.map(\.rawValue).joined(separator: ", "))")
                continue
            }
            masks.append((field, kind))
        }
        return (masks, ValueMasker(seed: seed))
    }

    public func run(in context: StageContext) async throws -> StageResult {
        var result = StageResult()
        var rejects = RejectsWriter(directory: context.reportDirectory, stageId: context.stageId)
        let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        var position = 0
        var meter = context.progress.meter(unit: "records")
        var writing: Task<Void, Error>?
        var resolver = lookups.isEmpty ? nil : LookupResolver(rules: lookups, client: try await context.org())
        var undo = RecordUndo()
        for try await var batch in context.inputBatches(batchSize: 5000, firstBatchSize: 1000) {
            var output: [JSONValue] = []
            output.reserveCapacity(batch.count)
            var counts = ObjectCounts()
            func settle(_ outcome: RecordTransformer.Outcome, of record: JSONObject, at position: Int, object: String) throws {
                switch outcome {
                case .record(let transformed): output.append(.object(transformed))
                case .filtered: counts.filtered(object)
                case .rejected(let reason):
                    result.add(StageCounts.rejected, object: object)
                    try rejects.add(line: RejectsWriter.line(of: record, position: position), reason: reason, raw: Self.raw(record))
                }
            }
            if resolver == nil {
                // Each record is taken out of the batch, so the transform owns it and changes it in place.
                for index in batch.indices {
                    position += 1
                    guard case .object(var record) = batch[index] else { continue }
                    batch[index] = .null
                    let object = Self.objectName(record, transformer.sobjectType)
                    counts.read(object)
                    let outcome = transformer.apply(&record, now: now, undo: &undo)
                    try settle(outcome, of: record, at: position, object: object)
                }
            } else {
                // Reshaped, then looked up together, then finished.
                var inputs: [(record: JSONObject, position: Int, object: String)] = []
                var reshaped: [JSONObject] = []
                for value in batch {
                    position += 1
                    guard case .object(let record) = value else { continue }
                    let object = Self.objectName(record, transformer.sobjectType)
                    counts.read(object)
                    // The input is kept for the rejects file; the undo notes are not needed.
                    var environment = FormulaEnvironment(record: record, now: now)
                    undo.start(record)
                    if let reason = transformer.reshape(&environment, undo: &undo) {
                        try settle(.rejected(reason), of: record, at: position, object: object)
                        continue
                    }
                    inputs.append((record, position, object))
                    reshaped.append(environment.record)
                }
                let refused = try await resolver!.apply(to: &reshaped, now: now)
                for index in reshaped.indices {
                    let input = inputs[index]
                    if let reason = refused[index] {
                        try settle(.rejected(reason), of: input.record, at: input.position, object: input.object)
                        continue
                    }
                    var environment = FormulaEnvironment(record: JSONObject(), now: now)
                    swap(&environment.record, &reshaped[index])
                    try settle(transformer.finish(&environment), of: input.record, at: input.position, object: input.object)
                }
            }
            counts.add(to: &result)
            // Written (serialized and stored) while the next batch is transformed, in order.
            try await writing?.value
            writing = Task { [output] in try await context.emit(output) }
            meter.advance(to: Int64(position))
            if context.shouldStop { break }
        }
        try await writing?.value
        try rejects.close()
        if let resolver {
            context.logger.info("lookups: \(resolver.queries) quer\(resolver.queries == 1 ? "y" : "ies") to the org")
        }
        return result
    }

    /// `read` and `filtered` per object, added to the result once a batch: a run of records of
    /// one object is counted without hashing its name.
    struct ObjectCounts {
        private var counts: [String: (read: Int, filtered: Int)] = [:]
        private var current = ""
        private var read = 0
        private var filtered = 0

        mutating func read(_ object: String) {
            if object != current { flush(); current = object }
            read += 1
        }

        mutating func filtered(_ object: String) {
            if object == current { filtered += 1 } else { counts[object, default: (0, 0)].filtered += 1 }
        }

        private mutating func flush() {
            if read > 0 || filtered > 0 {
                counts[current, default: (0, 0)].read += read
                counts[current, default: (0, 0)].filtered += filtered
            }
            (read, filtered) = (0, 0)
        }

        mutating func add(to result: inout StageResult) {
            flush()
            for (object, count) in counts {
                result.add(StageCounts.read, count.read, object: object)
                if count.filtered > 0 { result.add(StageCounts.filtered, count.filtered, object: object) }
            }
        }
    }

    static func objectName(_ record: JSONObject, _ sobjectType: String?) -> String {
        sobjectType ?? record["attributes"]?["type"]?.stringValue ?? "records"
    }

    /// The record as it came in, without its `attributes`, as JSON.
    static func raw(_ record: JSONObject) -> String {
        var fields = record
        fields["attributes"] = nil
        return JSONValue.object(fields).jsonString
    }
}
