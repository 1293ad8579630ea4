import Connectors
import JSON
import SOQL

/// `extract.soql`: runs a SOQL query against the org — every page, child subquery pages included —
/// into the stage's dataset. `query`, or `sobjectType` + `fields` (+ `where`) built through the SOQL
/// AST; `"all": true` for queryAll; `"bulk": true` for a Bulk API 2.0 query job (flat fields only).
public struct ExtractSOQLStage: Stage {
    public static let typeName = "extract.soql"
    public static let countKeys = [StageCounts.read]

    public let query: SOQLQuery
    public let includeDeleted: Bool
    public let bulk: Bool
    public let batchSize: Int?

    public init(settings: StageSettings) throws {
        includeDeleted = settings.bool("all", default: false)
        bulk = settings.bool("bulk", default: false)
        let size = settings.integer("batchSize", default: 0, range: 0...2000)
        batchSize = size == 0 ? nil : size
        let text = settings.soql("query")
        let type = settings.string("sobjectType")
        let fields = settings.strings("fields")
        let condition = settings.soql("where")
        var built: SOQLQuery?
        switch (text, type) {
        case (let text?, nil):
            if fields != nil || condition != nil { settings.report("query", "give either query, or sobjectType with fields and where; not both") }
            do {
                built = try SOQL.parseQuery(text)
            } catch {
                settings.report("query", "\(error.errorCode.rawValue) at row \(error.row), column \(error.column): \(error.detail)")
            }
        case (nil, let type?):
            do {
                var query = try SOQLQuery(selecting: fields ?? ["Id"], from: type)
                if let condition { query.addFilter(try SOQL.parseCondition(condition)) }
                built = query
            } catch {
                settings.report(condition == nil ? "fields" : "where", "\(error.errorCode.rawValue) at row \(error.row), column \(error.column): \(error.detail)")
            }
        case (nil, nil):
            settings.report(nil, "extract.soql needs a query, or an sobjectType with fields")
        case (.some, .some):
            settings.report("query", "give either query, or sobjectType with fields and where; not both")
        }
        if bulk, let built, built.select.contains(where: { if case .field = $0 { return false }; return true }) {
            settings.report("bulk", "Bulk API 2.0 query jobs take plain fields only (no subqueries or aggregates)")
        }
        guard let built else { throw StageSettingsInvalid() }
        query = built
    }

    public func run(in context: StageContext) async throws -> StageResult {
        let client = try await context.org()
        var result = StageResult()
        var batch: [JSONValue] = []
        let object = query.from.name
        context.progress.update(status: "RUNNING", progress: 0, totalSize: -1)
        func flush() async throws {
            guard !batch.isEmpty else { return }
            try await context.emit(batch)
            result.add(StageCounts.read, batch.count, object: object)
            batch.removeAll(keepingCapacity: true)
            context.progress.update(status: "RUNNING", progress: 0, totalSize: -1)
        }
        do {
            if bulk {
                pages: for try await page in client.bulkQuery(query.description, all: includeDeleted) {
                    for row in page.rows {
                        var record: JSONObject = ["attributes": ["type": .string(object)]]
                        for (name, value) in zip(page.columns, row) { record[name] = value.isEmpty ? .null : .string(value) }
                        batch.append(.object(record))
                        if batch.count >= 1000 { try await flush() }
                        if context.shouldStop { break pages }
                    }
                }
            } else {
                for try await record in client.query(query, all: includeDeleted, batchSize: batchSize) {
                    batch.append(.object(record))
                    if batch.count >= 1000 { try await flush() }
                    if context.shouldStop { break }
                }
            }
            try await flush()
        } catch let error as OrgAPIError where result.counts.isEmpty {
            // The org refused the query itself (MALFORMED_QUERY, INVALID_FIELD…): bad input, nothing changed.
            throw StageFailure(.invalidInput, "\(error.errorCode): \(error.message)")
        }
        context.progress.update(status: "DONE", progress: 100, totalSize: result.counts[StageCounts.read] ?? 0)
        return result
    }
}
