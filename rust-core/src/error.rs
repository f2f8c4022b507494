//! The one error type of the core: a stable code, the committed path it concerns, and a
//! message for people. Messages never quote payload values (docs/spec.md section 7).

use std::fmt;

/// Every refusal the core can report; `as_str` is the stable machine string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    InvalidUtf8,
    InvalidJson,
    LoneSurrogate,
    NumberOutOfRange,
    DepthExceeded,
    DuplicateMember,
    UnknownKind,
    IntegerOutOfRange,
    ValueType,
    MoneyFraction,
    CurrencyInvalid,
    TimestampInvalid,
    DateInvalid,
    UuidInvalid,
    CoordinateOutOfRange,
    NotInteger,
    DigestInvalid,
    SaltKeyInvalid,
    RecordIdInvalid,
    DeclarationInvalid,
    PayloadTooLarge,
    PayloadNotObject,
    PayloadEmpty,
    ControlCharacter,
    PathTooLong,
    TooManyFields,
    UndeclaredField,
    IndexOutOfRange,
    SizeInvalid,
    ProofInvalid,
    RootMismatch,
    RequestInvalid,
    BatchSizeInvalid,
    IdempotencyKeyInvalid,
    RecordTypeInvalid,
    SubjectIdInvalid,
    OccurredAtInvalid,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidUtf8 => "invalid_utf8",
            Code::InvalidJson => "invalid_json",
            Code::LoneSurrogate => "lone_surrogate",
            Code::NumberOutOfRange => "number_out_of_range",
            Code::DepthExceeded => "depth_exceeded",
            Code::DuplicateMember => "duplicate_member",
            Code::UnknownKind => "unknown_kind",
            Code::IntegerOutOfRange => "integer_out_of_range",
            Code::ValueType => "value_type",
            Code::MoneyFraction => "money_fraction",
            Code::CurrencyInvalid => "currency_invalid",
            Code::TimestampInvalid => "timestamp_invalid",
            Code::DateInvalid => "date_invalid",
            Code::UuidInvalid => "uuid_invalid",
            Code::CoordinateOutOfRange => "coordinate_out_of_range",
            Code::NotInteger => "not_integer",
            Code::DigestInvalid => "digest_invalid",
            Code::SaltKeyInvalid => "salt_key_invalid",
            Code::RecordIdInvalid => "record_id_invalid",
            Code::DeclarationInvalid => "declaration_invalid",
            Code::PayloadTooLarge => "payload_too_large",
            Code::PayloadNotObject => "payload_not_object",
            Code::PayloadEmpty => "payload_empty",
            Code::ControlCharacter => "control_character",
            Code::PathTooLong => "path_too_long",
            Code::TooManyFields => "too_many_fields",
            Code::UndeclaredField => "undeclared_field",
            Code::IndexOutOfRange => "index_out_of_range",
            Code::SizeInvalid => "size_invalid",
            Code::ProofInvalid => "proof_invalid",
            Code::RootMismatch => "root_mismatch",
            Code::RequestInvalid => "request_invalid",
            Code::BatchSizeInvalid => "batch_size_invalid",
            Code::IdempotencyKeyInvalid => "idempotency_key_invalid",
            Code::RecordTypeInvalid => "record_type_invalid",
            Code::SubjectIdInvalid => "subject_id_invalid",
            Code::OccurredAtInvalid => "occurred_at_invalid",
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refused input. `field` is a committed path (or a declaration pattern) or `None`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub code: Code,
    pub field: Option<String>,
    pub message: String,
}

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Error {
            code,
            field: None,
            message: message.into(),
        }
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub fn with_optional_field(mut self, field: Option<String>) -> Self {
        self.field = field;
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.field {
            Some(field) => write!(f, "{} at {}: {}", self.code, field, self.message),
            None => write!(f, "{}: {}", self.code, self.message),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
