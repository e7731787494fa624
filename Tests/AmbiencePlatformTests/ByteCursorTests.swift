import AmbiencePlatform
import Foundation
import Glibc
import Testing

@testable import AmbienceTestSupport

@Suite(.offTheCooperativePool) struct ByteCursorTests {
    @Test func readsInOrderAndRefusesToRunPastTheEnd() {
        var cursor = ByteCursor([0, 0, 0, 3, 0xAA, 0xBB, 0xCC, 0, 0, 1])
        let length = cursor.u32BE(), field = cursor.bytes(3)
        #expect(length == 3 && field == [0xAA, 0xBB, 0xCC])
        let pastTheEnd = cursor.u32BE()  // three bytes left
        #expect(pastTheEnd == nil && cursor.offset == 7)  // a refused read does not move
        let longSkip = cursor.skip(4), negative = cursor.bytes(-1)
        #expect(!longSkip && negative == nil && cursor.offset == 7)
        let skipped = cursor.skip(2), last = cursor.bytes(1)
        #expect(skipped && last == [1])
        #expect(cursor.remaining == 0)
    }
}
