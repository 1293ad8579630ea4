import JSON
import SOQL

extension OrgClient {
    /// Streams the records of a query page by page (constant memory), following `nextRecordsUrl`.
    /// Child subquery results that the org paged (`done: false`) are completed before the parent
    /// record is yielded, so every record carries all its children.
    /// - Parameters:
    ///   - all: `queryAll` (include deleted and archived records).
    ///   - batchSize: `Sforce-Query-Options: batchSize=N` (200–2000).
    public func query(_ soql: String, all: Bool = false, batchSize: Int? = nil) -> ProducedSequence<JSONObject> {
        ProducedSequence { yield in
            var headers: [(String, String)] = []
            if let batchSize { headers.append(("Sforce-Query-Options", "batchSize=\(min(2000, max(200, batchSize)))")) }
            var request = OrgRequest(method: "GET", path: apiPath + (all ? "/queryAll" : "/query"), query: [("q", soql)],
                                     headers: headers, kind: "query")
            while true {
                let page = try await send(request).json()
                for record in page["records"]?.arrayValue ?? [] {
                    guard let object = record.objectValue else { continue }
                    try await yield(try await completingChildren(of: object))
                }
                guard page["done"] == false, let next = page["nextRecordsUrl"]?.stringValue else { break }
                request = OrgRequest(method: "GET", path: next, headers: headers, kind: "query")
            }
        }
    }

    /// Streams a query built through the SOQL AST (values escaped, filters parenthesised).
    public func query(_ query: SOQLQuery, all: Bool = false, batchSize: Int? = nil) -> ProducedSequence<JSONObject> {
        self.query(query.description, all: all, batchSize: batchSize)
    }

    /// The number of records a `SELECT COUNT() …` query counts.
    public func count(_ soql: String) async throws -> Int {
        let page = try await send(OrgRequest(method: "GET", path: apiPath + "/query", query: [("q", soql)], kind: "query")).json()
        return Int(page["totalSize"]?.integerValue ?? 0)
    }

    /// Fetches the remaining pages of any nested child result of `record`.
    func completingChildren(of record: JSONObject) async throws -> JSONObject {
        var record = record
        // The members as they were: a member completed below is not met again.
        for (key, value) in record {
            guard let child = value.objectValue, child["done"] == false, var next = child["nextRecordsUrl"]?.stringValue,
                  var records = child["records"]?.arrayValue else { continue }
            while true {
                let page = try await send(OrgRequest(method: "GET", path: next, kind: "query")).json()
                records += page["records"]?.arrayValue ?? []
                guard page["done"] == false, let following = page["nextRecordsUrl"]?.stringValue else { break }
                next = following
            }
            var completed = child
            completed["records"] = .array(records)
            completed["done"] = true
            completed["nextRecordsUrl"] = nil
            record[key] = .object(completed)
        }
        return record
    }
}
