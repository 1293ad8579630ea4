import JSON
import SOQL

/// One page of a query's results, its child subquery results completed.
public struct QueryPage: Sendable {
    /// The number of records the whole query matches (from the first page on).
    public var totalSize: Int
    /// The records, built; empty when ``raw`` holds them.
    public var records: [JSONObject]
    /// The records as the org sent them, unbuilt: set on pages of ``OrgClient/queryPages(_:all:batchSize:raw:)``
    /// asked for raw, unless the page may hold child subquery results (built, to be completed) or
    /// is not as expected (built, to fail as a built page does).
    public var raw: RawJSONObjects?

    public init(totalSize: Int, records: [JSONObject], raw: RawJSONObjects? = nil) {
        self.totalSize = totalSize
        self.records = records
        self.raw = raw
    }

    /// The number of records.
    public var count: Int { raw?.count ?? records.count }
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
    /// Leave the records of pages that need no completion unbuilt (``QueryPage/raw``).
    let raw: Bool

    /// A page's answer, not yet parsed, and the request for the page after it.
    struct Downloaded: Sendable {
        var response: OrgResponse
        var next: OrgRequest?
        /// The page as raw records, when asked for and possible.
        var raw: QueryPage?
    }

    static func download(_ request: OrgRequest, client: any OrgClient, raw: Bool) async throws -> Downloaded {
        let response = try await client.send(request)
        if raw, let (page, nextURL) = rawPage(response.body) {
            let next = nextURL.map { OrgRequest(method: "GET", path: $0, headers: request.headers, kind: "query") }
            return Downloaded(response: response, next: next, raw: page)
        }
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

    /// `"records"` as written in a page: a record holding it holds a child subquery's results.
    private static let recordsName = Array("\"records\"".utf8)
    /// `\u`: an escape, the one way a name could spell `records` otherwise.
    private static let unicodeEscape = Array("\\u".utf8)

    /// A page's records found in its bytes without building them, with its `nextRecordsUrl` when
    /// not done; `nil` when the page is to be parsed — so that it fails as a built page does, or is
    /// completed: a page that is not as expected (a member name with escapes or repeated, a value
    /// besides the records that does not parse), or records that may hold child subquery results
    /// (`"records"` in them, or a `\u` escape that could spell it). The records themselves are
    /// checked as they are copied.
    static func rawPage(_ body: [UInt8]) -> (page: QueryPage, next: String?)? {
        guard let (members, elements) = try? JSONParser.members(of: body, elementsOf: "records"), let elements,
              members.allSatisfy({ isPlainName(body[$0.name]) }),
              Set(members.map { Array(body[$0.name]) }).count == members.count else { return nil }
        var values: [String: JSONValue] = [:]
        for member in members where !body[member.name].elementsEqual("records".utf8) {
            guard let value = try? JSONParser.parseValue(in: body, at: member.value) else { return nil }
            values[String(decoding: body[member.name], as: UTF8.self)] = value
        }
        // Elements that are not objects are passed over, as when the page is built (once they parse).
        var records: [Range<Int>] = []
        records.reserveCapacity(elements.count)
        for element in elements {
            if body[element.lowerBound] == UInt8(ascii: "{") {
                records.append(element)
            } else if (try? JSONParser.parseValue(in: body, at: element)) == nil {
                return nil
            }
        }
        if let first = records.first, let last = records.last {
            let span = first.lowerBound..<last.upperBound
            if contains(body, recordsName, in: span) || contains(body, unicodeEscape, in: span) { return nil }
        }
        let next = values["done"] == false ? values["nextRecordsUrl"]?.stringValue : nil
        let page = QueryPage(totalSize: Int(values["totalSize"]?.integerValue ?? 0), records: [], raw: RawJSONObjects(bytes: body, ranges: records))
        return (page, next)
    }

    /// Whether a member name is one parsing reads as it is written: no escape, no control
    /// character, valid UTF-8.
    private static func isPlainName(_ name: ArraySlice<UInt8>) -> Bool {
        !name.contains { $0 < 0x20 || $0 == UInt8(ascii: "\\") } && String(validating: name, as: UTF8.self) != nil
    }

    /// Whether `pattern` (not empty) occurs in `range` of `bytes`: Horspool's search, which steps
    /// over most of a page's bytes unread.
    private static func contains(_ bytes: [UInt8], _ pattern: [UInt8], in range: Range<Int>) -> Bool {
        let length = pattern.count
        guard range.count >= length else { return false }
        var shift = [Int](repeating: length, count: 256)
        for (offset, byte) in pattern.dropLast().enumerated() { shift[Int(byte)] = length - 1 - offset }
        return bytes.withUnsafeBufferPointer { buffer in
            var end = range.lowerBound + length - 1
            while end < range.upperBound {
                if buffer[(end - length + 1)...end].elementsEqual(pattern) { return true }
                end += shift[Int(buffer[end])]
            }
            return false
        }
    }

    static func page(from downloaded: Downloaded, client: any OrgClient) async throws -> QueryPage {
        if let page = downloaded.raw { return page }
        let page = try downloaded.response.json()
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
    static func produce(from first: OrgRequest, client: any OrgClient, raw: Bool, yield: @Sendable (QueryPage) async throws -> Void) async throws {
        var downloaded = try await download(first, client: client, raw: raw)
        while true {
            let following = downloaded.next.map { request in Task { try await download(request, client: client, raw: raw) } }
            do {
                try await yield(try await page(from: downloaded, client: client))
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
        let client = client, first = first, raw = raw
        return AsyncIterator(base: ProducedSequence { yield in
            try await QueryPages.produce(from: first, client: client, raw: raw, yield: yield)
        }.makeAsyncIterator())
    }
}

extension OrgClient {
    /// The pages of a query (or `queryAll`), fetched on demand; every record carries all its children.
    /// With `raw`, a page whose records hold no child subquery results leaves them as the org sent
    /// them (``QueryPage/raw``), for a consumer that copies them as they are.
    public func queryPages(_ query: SOQLQuery, all: Bool = false, batchSize: Int? = nil, raw: Bool = false) -> QueryPages {
        var headers: [(String, String)] = []
        if let batchSize { headers.append(("Sforce-Query-Options", "batchSize=\(min(2000, max(200, batchSize)))")) }
        return QueryPages(client: self, first: OrgRequest(method: "GET", path: apiPath + (all ? "/queryAll" : "/query"),
                                                          query: [("q", query.description)], headers: headers, kind: "query"), raw: raw)
    }
}
