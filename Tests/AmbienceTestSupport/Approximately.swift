/// Loudness arithmetic compared with a tolerance (decibels, gains).
extension Double {
    func isApproximately(_ other: Double, within tolerance: Double = 1e-6) -> Bool { abs(self - other) <= tolerance }
}
