import Foundation
import Testing

@testable import AmbienceCore
@testable import AmbienceDesktop
@testable import AmbienceTestSupport

/// Which bus names are one player, as pure logic.
@Suite(.offTheCooperativePool) struct MPRISPlayerIdentityTests {
    func info(_ short: String, owner: String, pid: Int?) -> MPRISPlayerInfo {
        var info = MPRISPlayerInfo(name: MPRISClient.namePrefix + short, uniqueName: owner)
        info.processID = pid
        return info
    }

    @Test func oneConnectionOrOneProcessWithAnInstanceTwinIsOnePlayer() {
        #expect(
            MPRISPlayerInfo.samePlayer(info("vlc", owner: ":1.0", pid: 7), info("vlc.instance7", owner: ":1.1", pid: 7))
        )
        #expect(MPRISPlayerInfo.samePlayer(info("a", owner: ":1.3", pid: nil), info("b", owner: ":1.3", pid: nil)))
        // Two mpv processes are two players; so are two differently named players in one process.
        #expect(
            !MPRISPlayerInfo.samePlayer(
                info("mpv", owner: ":1.4", pid: 8), info("mpv.instance9", owner: ":1.5", pid: 9)))
        #expect(!MPRISPlayerInfo.samePlayer(info("tab1", owner: ":1.6", pid: 10), info("tab2", owner: ":1.7", pid: 10)))
        #expect(MPRISPlayerInfo.isInstanceName(MPRISClient.namePrefix + "chromium.instance1234"))
        #expect(!MPRISPlayerInfo.isInstanceName(MPRISClient.namePrefix + "instancer"))
        #expect(MPRISPlayerInfo.baseName(MPRISClient.namePrefix + "vlc.instance7") == MPRISClient.namePrefix + "vlc")
    }
}
