//! The words, phrases, voices and sounds of the voice evaluation set (see `corpus`). Kept
//! compact, one list per item, so the lists read as lists.

use super::corpus::Truth;

/// The answer phrases evaluated on prompts without a challenge word, with their meaning. Every
/// answer phrase of the Korean phrase pack is here (a test checks it).
#[rustfmt::skip]
pub const ANSWERS: &[(&str, Truth)] = &[
    ("네", Truth::Approve),
    ("예", Truth::Approve),
    ("아니요", Truth::Deny),
    ("아니", Truth::Deny),
    ("취소", Truth::Cancel),
];

/// espeak-ng's Korean voice with its variants (`espeak-ng --voices=variant`): male, female,
/// older, rough and the Klatt synthesizer. Left out: the whisper variants (no voiced speech)
/// and the effect voices (robots, "Demonic").
#[rustfmt::skip]
pub const VOICES: &[&str] = &[
    "ko", "ko+m1", "ko+m2", "ko+m3", "ko+m4", "ko+m5", "ko+m6", "ko+m7", "ko+f1", "ko+f2",
    "ko+f3", "ko+f4", "ko+f5", "ko+croak", "ko+grandma", "ko+grandpa", "ko+klatt", "ko+klatt3",
];

/// Words that sound like an answer word, per answer word. None of them is an answer.
#[rustfmt::skip]
pub const NEAR_HOMOPHONES: &[(&str, &[&str])] = &[
    ("네", &[
        "내", "데", "레", "메", "세", "게", "제", "체", "테", "넷", "넥", "넴", "녜", "내가", "네모", "네시", "내년",
        "넷째",
    ]),
    ("예", &[
        "애", "얘", "에", "여", "요", "계", "례", "혜", "얘기", "예술", "예약", "예전", "여기", "역", "옛날", "예시",
        "예산", "예쁘다",
    ]),
    ("아니요", &[
        "아이요", "아내요", "하니요", "다니요", "아기요", "어니요", "아파요", "안이요", "아니메", "아이유", "아침이요", "아니면요",
    ]),
    ("아니", &[
        "아이", "하니", "다니", "마니", "아내", "아기", "안에", "아직", "어느", "아무", "아빠", "야니",
    ]),
    ("취소", &[
        "최소", "치소", "추소", "취사", "취수", "치수", "추수", "휘소", "취조", "주소", "치즈", "치료", "취미", "최고",
        "취업", "쥐소",
    ]),
];

/// Common Korean words that are not answers.
#[rustfmt::skip]
pub const COMMON_WORDS: &[&str] = &[
    "사람", "시간", "학교", "친구", "가족", "회사", "집", "물", "밥", "음식", "커피", "책", "영화", "음악", "노래", "날씨",
    "바람", "비", "눈", "산", "강", "도시", "나라", "세상", "문제", "생각", "마음", "사랑", "행복", "이름", "전화", "문자",
    "사진", "그림", "운동", "축구", "야구", "병원", "의사", "선생님", "학생", "어른", "엄마", "형", "누나", "동생", "할머니",
    "할아버지", "아침", "점심", "저녁", "오늘", "내일", "어제", "주말", "월요일", "금요일", "일요일", "봄", "여름", "가을",
    "겨울", "자동차", "버스", "지하철", "비행기", "공항", "길", "오른쪽", "왼쪽", "위", "아래", "밖", "하나", "둘", "셋",
    "다섯", "여섯", "일곱", "여덟", "아홉", "열", "백", "천", "만", "돈", "가게", "시장", "옷", "신발", "가방", "컴퓨터",
    "휴대폰", "텔레비전", "인터넷", "게임", "뉴스", "신문", "편지", "선물", "생일", "여행", "휴가", "호텔", "방", "문", "창문",
    "의자", "책상", "침대", "냉장고", "부엌", "화장실", "공원", "도서관", "은행", "우체국", "경찰", "교회", "빵", "과일", "고기",
    "생선", "김치", "라면", "비빔밥", "불고기", "맥주", "소주", "녹차", "주스", "고양이", "강아지", "새", "소", "돼지", "닭",
    "꽃", "풀", "돌", "불", "얼음", "소리", "목소리", "색깔", "빨간색", "파란색", "노란색", "검은색", "하얀색", "키보드",
    "마우스", "화면", "프로그램", "폴더", "문서", "저장", "복사", "검색", "설정", "업데이트", "다운로드", "로그인", "비밀번호",
    "이메일", "메시지", "알림", "음량", "밝기",
];

/// Short phrases that are not answers (some agree in meaning, but are not answer phrases).
#[rustfmt::skip]
pub const PHRASES: &[&str] = &[
    "안녕하세요", "감사합니다", "고맙습니다", "죄송합니다", "미안해요", "괜찮아요", "잘 지내요", "배고파요", "피곤해요", "어디 가요",
    "뭐 해요", "몇 시예요", "얼마예요", "좋은 아침", "잘 자요", "또 봐요", "다시 말해 주세요", "잠깐만요", "모르겠어요", "알겠습니다",
    "좋아요", "그래요", "맞아요", "글쎄요", "물론이죠", "잠시만요", "천천히 해 주세요", "이거 뭐예요", "화장실 어디예요", "오늘 날씨가 좋네요",
    "내일 만나요", "지금 몇 시야", "음악 틀어 줘", "불 꺼 줘", "창문 열어 줘", "파일 저장해", "문서 열어 줘", "전화 걸어 줘",
    "메시지 보내 줘", "알람 맞춰 줘", "볼륨 올려 줘", "사진 찍어 줘", "길 알려 줘", "커피 한 잔 주세요", "집에 가고 싶어요", "너무 좋아요",
    "진짜요", "정말요", "그렇군요", "어떡해", "아이고", "여보세요", "있잖아", "그러니까", "그런데", "그래서", "하지만", "좋아", "그래",
    "응", "확인", "음",
];

/// Challenge words, as the Korean phrase pack lists them (a test checks it).
#[rustfmt::skip]
pub const CHALLENGE_WORDS: &[&str] = &[
    "기차", "거울", "라디오", "무지개", "코끼리",
];

/// Melodies and chords for the music-like clips: sox `synth` arguments.
#[rustfmt::skip]
pub const MUSIC: &[&[&str]] = &[
    &["2.0", "pluck", "C4", "pluck", "E4", "pluck", "G4"],
    &["2.0", "sine", "440", "sine", "554", "sine", "659"],
    &["2.5", "square", "220-440"],
    &["1.5", "triangle", "330", "tremolo", "6", "60"],
    &["2.0", "pluck", "A3", "pluck", "C4", "pluck", "E4", "pluck", "A4"],
    &["1.0", "sine", "880", "sine", "1320"],
    &["2.0", "sawtooth", "110", "lowpass", "800"],
    &["2.5", "sine", "300-900", "tremolo", "3", "40"],
];
