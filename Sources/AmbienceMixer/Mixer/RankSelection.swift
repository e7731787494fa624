/// The selection a rank makes: the score a voice needs to be among the `k` most important (VoicePool.rank). Pure
/// functions over a buffer of scores, apart from the pool for length.

/// `kthLargest` started from a guess, the last rank's threshold: one pass moves the values above it to the front,
/// and the search goes on only in the part that holds the answer. Between two ranks the crowd changes little, so
/// that part is the few hundred voices above the guess, or the guess itself: one pass over the crowd instead of the
/// two or three a quickselect from scratch makes (half the rank's cost with 10,000 voices). Reorders the values.
func kthLargest(_ values: UnsafeMutableBufferPointer<Float>, count: Int, k: Int, near guess: Float) -> Float {
    precondition(k >= 1 && k <= count)
    guard guess.isFinite else { return kthLargest(values, count: count, k: k) }
    var above = 0
    for i in 0..<count where values[i] > guess {
        values.swapAt(i, above)
        above += 1
    }
    if k <= above {
        return kthLargest(UnsafeMutableBufferPointer(rebasing: values[0..<above]), count: above, k: k)
    }
    var atGuess = above
    for i in above..<count where values[i] == guess {
        values.swapAt(i, atGuess)
        atGuess += 1
    }
    if k <= atGuess { return guess }
    let rest = UnsafeMutableBufferPointer(rebasing: values[atGuess..<count])
    let wanted = k - atGuess
    // A few short of the guess (a real voice ended): the largest few below it, in one pass, no allocation.
    guard wanted <= 16 else { return kthLargest(rest, count: count - atGuess, k: wanted) }
    return withUnsafeTemporaryAllocation(of: Float.self, capacity: wanted) { top in
        // `top[0..<filled]` holds the largest seen so far, in descending order.
        var filled = 0
        for value in rest {
            guard filled < wanted || value > top[wanted - 1] else { continue }
            var j = min(filled, wanted - 1)
            while j > 0 && top[j - 1] < value {
                top[j] = top[j - 1]
                j -= 1
            }
            top[j] = value
            if filled < wanted { filled += 1 }
        }
        return top[wanted - 1]
    }
}

/// The value that would sit at index `k - 1` if `values[0..<count]` were sorted in descending order (quickselect).
func kthLargest(_ values: UnsafeMutableBufferPointer<Float>, count: Int, k: Int) -> Float {
    precondition(k >= 1 && k <= count)
    var low = 0, high = count - 1
    let target = k - 1
    while low < high {
        let pivot = values[(low + high) / 2]
        var i = low, j = high
        while i <= j {
            while values[i] > pivot { i += 1 }
            while values[j] < pivot { j -= 1 }
            if i <= j { values.swapAt(i, j); i += 1; j -= 1 }
        }
        if target <= j { high = j } else if target >= i { low = i } else { break }
    }
    return values[target]
}
