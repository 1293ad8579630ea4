import Foundation
import JSON
import Stages
import Testing

/// The progress of stages that are not syncs, as the console and JSON logs show it.
struct WorkProgressTests {
    @Test func bytesOfAKnownSizeShowPercentRateAndTimeLeft() throws {
        let event = RunEvent.work(stage: "csv", done: 5_200_000, total: 12_100_000, unit: "bytes", rate: 4_100_000)
        #expect(event.text == "[csv] 42% · 5.2 MB of 12.1 MB · 4.1 MB/s · 2 s left")
        let line = try #require(JSONParser.parse(Data(event.jsonLine(at: Date(timeIntervalSince1970: 0)).utf8)).value.objectValue)
        #expect(line["event"] == "progress")
        #expect(line["status"] == "RUNNING")
        #expect(line["progress"] == 42)
        #expect(line["totalSize"] == 12_100_000)
        #expect(line["done"] == 5_200_000)
        #expect(line["unit"] == "bytes")
        #expect(line["etaSeconds"] == 2)
    }

    @Test func recordsOfAnUnknownTotalShowCountAndRate() throws {
        let event = RunEvent.work(stage: "stage", done: 230_000, total: nil, unit: "records", rate: 45_805.4)
        #expect(event.text == "[stage] 230,000 records · 45,805 records/s")
        let line = try #require(JSONParser.parse(Data(event.jsonLine(at: Date()).utf8)).value.objectValue)
        #expect(line["totalSize"] == -1)
        #expect(line["etaSeconds"] == nil)
    }
}
