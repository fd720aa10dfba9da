//! Voice confirmation: cpal capture, resampling, Vosk grammar recognition, phrase packs, spoken
//! prompts and availability probing.
