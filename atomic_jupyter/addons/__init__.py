"""Parts that add arguments, environment and clean-up to a launch: the offline demo model and
extension, and extension prototyping. Closed with their session. No widgets here.
"""
