package dev.taskline.model;

import java.util.List;

/**
 * A page of a list that could grow without bound: its items, and {@code next}, the cursor of the
 * page after (null: the last page).
 */
public record Page<T>(List<T> items, String next) {}
