import AmbiencePlatform
import Glibc
import Synchronization
import Testing

@testable import AmbienceTestSupport

private let destroyed = Atomic<Int>(0)

@Suite(.offTheCooperativePool, .timeLimit(.minutes(5))) struct ThreadLocalKeyTests {
    /// Each thread sees its own value; a thread that ends with one set hands it to the destructor, once.
    @Test func eachThreadHasItsOwnValue() throws {
        let key = try ThreadLocalKey { value in
            destroyed.add(1, ordering: .relaxed)
            free(value)
        }
        #expect(key.value == nil)
        let mine = malloc(1)
        key.set(mine)
        #expect(key.value == mine)

        let before = destroyed.load(ordering: .relaxed)
        var thread = pthread_t()
        // Joined inside the closure: the pointer to `key` lives only as long as it.
        let started = withUnsafePointer(to: key) { keyPointer in
            let status = pthread_create(
                &thread, nil,
                { raw in
                    let key = raw!.assumingMemoryBound(to: ThreadLocalKey.self).pointee
                    if key.value == nil { key.set(malloc(1)) }
                    return nil
                }, UnsafeMutableRawPointer(mutating: keyPointer))
            if status == 0 { pthread_join(thread, nil) }
            return status
        }
        #expect(started == 0)
        #expect(destroyed.load(ordering: .relaxed) == before + 1)
        #expect(key.value == mine)

        #expect(key.set(nil))
        #expect(key.value == nil)
        free(mine)
    }
}
