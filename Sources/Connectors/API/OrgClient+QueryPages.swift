import JSON
import SOQL

/// One page of a query's results, its child subquery results completed.
public struct QueryPage: Sendable {
    /// The number of records the whole query matches (from the first page on).
    public var totalSize: Int
    public var records: [JSONObject]

    public init(totalSize: Int, records: [JSONObject]) {
        self.totalSize = totalSize
        self.records = records
    }
}

/// The pages of a query, fetched in a pipeline: while the consumer works on one page, the next
/// is parsed and the one after it downloaded (its request leaves as soon as the previous page's
/// bytes are in — the `nextRecordsUrl` read without parsing the records). So the org, the parser
/// and the consumer work at the same time, and memory holds at most three pages. Nothing starts
/// before the sequence is iterated; an iterator dropped early cancels what is under way.
public struct QueryPages: AsyncSequence, Sendable {
    public typealias Element = QueryPage

    let client: any OrgClient
    let first: OrgRequest

    /// A page's answer, not yet parsed, and the request for the page after it.
    struct Downloaded: Sendable {
        var response: OrgResponse
        var next: OrgRequest?
    }

    static func download(_ request: OrgRequest, client: any OrgClient) async throws -> Downloaded {
        let response = try await client.send(request)
        let header: JSONObject
        do {
            header = try JSONParser.parseObject(response.body, keeping: ["done", "nextRecordsUrl"])
        } catch {
            throw OrgClientError.invalidResponse("the org answered HTTP \(response.status) with a query page that is not a JSON object (\(error))")
        }
        var next: OrgRequest?
        if header["done"] == false, let url = header["nextRecordsUrl"]?.stringValue {
            next = OrgRequest(method: "GET", path: url, headers: request.headers, kind: "query")
        }
        return Downloaded(response: response, next: next)
    }

    static func page(from response: OrgResponse, client: any OrgClient) async throws -> QueryPage {
        let page = try response.json()
        var records: [JSONObject] = []
        for record in page["records"]?.arrayValue ?? [] {
            guard let object = record.objectValue else { continue }
            records.append(try await client.completingChildren(of: object))
        }
        return QueryPage(totalSize: Int(page["totalSize"]?.integerValue ?? 0), records: records)
    }

    /// Downloads page after page — each download starting as soon as the previous page's bytes
    /// are in — parses each beside the next one's download, and hands it over when the consumer
    /// asks for it (not sooner: back-pressure).
    static func produce(from first: OrgRequest, client: any OrgClient, yield: @Sendable (QueryPage) async throws -> Void) async throws {
        var downloaded = try await download(first, client: client)
        while true {
            let following = downloaded.next.map { request in Task { try await download(request, client: client) } }
            do {
                try await yield(try await page(from: downloaded.response, client: client))
            } catch {
                following?.cancel()
                throw error
            }
            guard let following else { return }
            downloaded = try await withTaskCancellationHandler {
                try await following.value
            } onCancel: {
                following.cancel()
            }
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: ProducedSequence<QueryPage>.AsyncIterator

        public mutating func next() async throws -> QueryPage? {
            try await base.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        let client = client, first = first
        return AsyncIterator(base: ProducedSequence { yield in
            try await QueryPages.produce(from: first, client: client, yield: yield)
        }.makeAsyncIterator())
    }
}

extension OrgClient {
    /// The pages of a query (or `queryAll`), fetched on demand; every record carries all its children.
    public func queryPages(_ query: SOQLQuery, all: Bool = false, batchSize: Int? = nil) -> QueryPages {
        var headers: [(String, String)] = []
        if let batchSize { headers.append(("Sforce-Query-Options", "batchSize=\(min(2000, max(200, batchSize)))")) }
        return QueryPages(client: self, first: OrgRequest(method: "GET", path: apiPath + (all ? "/queryAll" : "/query"),
                                                          query: [("q", query.description)], headers: headers, kind: "query"))
    }
}
