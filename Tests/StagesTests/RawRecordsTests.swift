import Connectors
import JSON
import Testing

@testable import Stages

/// A page's raw records that are not valid JSON fail as the org's answer, placed in the page.
@Suite struct RawRecordsTests {
    @Test func aRecordThatIsNotJSONIsTheOrgsFault() throws {
        let page = Array("{\"records\":[\n{\"Id\":\"1\"},\n{\"Id\":tru}]}".utf8)
        let records = RawJSONObjects(bytes: page, ranges: try #require(try JSONParser.members(of: page, elementsOf: "records").elements))
        for read in [{ _ = try records.orgRecords() }, { _ = try records.orgMembers(JSONParser.MemberNames(["Id"]), at: 1) }] {
            #expect {
                try read()
            } throws: { error in
                guard case .invalidResponse(let message) = error as? OrgClientError else { return false }
                return message == "the org answered with a query page whose records are not valid JSON (line 3, column 7: invalid literal, expected 'true')"
            }
        }
        #expect(try records.orgMembers(JSONParser.MemberNames(["Id"]), at: 0) == ["Id": "1"])
    }
}
