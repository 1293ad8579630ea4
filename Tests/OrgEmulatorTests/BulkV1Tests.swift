import Foundation
import JSON
import Testing

/// Bulk API 1.0 in its XML / CSV dialect, as Data Loader, amaxa and CumulusCI speak it (the JSON
/// dialect is driven by simple-salesforce in Tests/Conformance).
@Suite struct BulkV1Tests {
    static func value(_ tag: String, in xml: String) -> String? {
        guard let open = xml.range(of: "<\(tag)>"), let close = xml.range(of: "</\(tag)>", range: open.upperBound..<xml.endIndex) else { return nil }
        return String(xml[open.upperBound..<close.lowerBound])
    }

    @Test func xmlJobsTakeCSVBatchesAndAnswerPerRow() async throws {
        try await withEmulator { emu in
            let base = emu.instanceURL + "/services/async/52.0/job"
            let session = ["X-SFDC-Session": emu.token]
            func post(_ path: String, _ body: String, _ type: String) async throws -> Reply {
                try await emu.send("POST", path, body: Data(body.utf8), contentType: type, headers: session, auth: .none)
            }
            let create = try await post(base, """
                <?xml version="1.0" encoding="UTF-8"?><jobInfo xmlns="http://www.force.com/2009/06/asyncapi/dataload">
                <operation>insert</operation><object>Account</object><contentType>CSV</contentType></jobInfo>
                """, "application/xml; charset=UTF-8")
            #expect(create.status == 201, "\(create.text)")
            #expect(create.header("Content-Type")?.hasPrefix("application/xml") == true)
            let jobId = try #require(Self.value("id", in: create.text))
            #expect(Self.value("state", in: create.text) == "Open")
            #expect(Self.value("apiVersion", in: create.text) == "52.0")

            let batch = try await post("\(base)/\(jobId)/batch", "Name,Industry\nBulk One,Energy\n,Banking\n\"Bulk, Two\",Technology\n", "text/csv")
            #expect(batch.status == 201)
            let batchId = try #require(Self.value("id", in: batch.text))
            let info = try await emu.send("GET", "\(base)/\(jobId)/batch/\(batchId)", headers: session, auth: .none)
            #expect(Self.value("state", in: info.text) == "Completed")
            #expect(Self.value("numberRecordsProcessed", in: info.text) == "3")
            #expect(Self.value("numberRecordsFailed", in: info.text) == "1")

            let results = try await emu.send("GET", "\(base)/\(jobId)/batch/\(batchId)/result", headers: session, auth: .none)
            let lines = results.text.split(separator: "\n").map(String.init)
            #expect(lines[0] == #""Id","Success","Created","Error""#)
            #expect(lines[1].hasPrefix(#""001"#) && lines[1].hasSuffix(#","true","true","""#))
            #expect(lines[2].hasPrefix(#""","false","false","REQUIRED_FIELD_MISSING:Required fields are missing: [Name]:Name --""#))
            #expect(lines.count == 4)

            let closed = try await post("\(base)/\(jobId)", "<jobInfo xmlns=\"http://www.force.com/2009/06/asyncapi/dataload\"><state>Closed</state></jobInfo>",
                                        "application/xml")
            #expect(Self.value("state", in: closed.text) == "Closed")
            #expect(Self.value("numberBatchesCompleted", in: closed.text) == "1")
            let late = try await post("\(base)/\(jobId)/batch", "Name\nLate\n", "text/csv")
            #expect(late.status == 400 && Self.value("exceptionCode", in: late.text) == "InvalidJobState")

            // A query job: the batch is the SOQL; its result is listed by id, then read as CSV.
            let query = try await post(base, "<jobInfo xmlns=\"http://www.force.com/2009/06/asyncapi/dataload\"><operation>query</operation><object>Account</object><contentType>CSV</contentType></jobInfo>",
                                       "application/xml")
            let queryJob = try #require(Self.value("id", in: query.text))
            let queryBatch = try await post("\(base)/\(queryJob)/batch", "SELECT Name FROM Account WHERE Name LIKE 'Bulk%' ORDER BY Name", "text/csv")
            let queryBatchId = try #require(Self.value("id", in: queryBatch.text))
            let list = try await emu.send("GET", "\(base)/\(queryJob)/batch/\(queryBatchId)/result", headers: session, auth: .none)
            let resultId = try #require(Self.value("result", in: list.text))
            let rows = try await emu.send("GET", "\(base)/\(queryJob)/batch/\(queryBatchId)/result/\(resultId)", headers: session, auth: .none)
            #expect(rows.text == "\"Name\"\n\"Bulk One\"\n\"Bulk, Two\"\n")
        }
    }

    @Test func aBadSessionIsInvalidSessionId() async throws {
        try await withEmulator { emu in
            let reply = try await emu.send("POST", emu.instanceURL + "/services/async/62.0/job", body: Data("<jobInfo/>".utf8),
                                           contentType: "application/xml", headers: ["X-SFDC-Session": "nope"], auth: .none)
            #expect(reply.status == 400)
            #expect(Self.value("exceptionCode", in: reply.text) == "InvalidSessionId")
        }
    }
}
