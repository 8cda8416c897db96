"""τ²-retail's judge: the NL_ASSERTION reward component (:mod:`.nl_assertions`)."""
