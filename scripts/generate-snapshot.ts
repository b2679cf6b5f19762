// Generates deterministic, seeded snapshots (contract §1): the demo data/snapshot.json and large benchmark files.
import { createWriteStream, realpathSync } from 'node:fs'
import { mkdir, realpath, rename, rm, stat } from 'node:fs/promises'
import { once } from 'node:events'
import { finished } from 'node:stream/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { LANGUAGE_PATTERN, type Snapshot, type SnapshotItem } from '../src/schemas/snapshot.js'

export interface GenerateOptions {
  seed?: number
  /** Items in `en`; the other default languages scale from it. Ignored when `languages` is given. */
  items?: number
  /** Explicit item counts per language segment, in output order; replaces the default en/es/fr set. */
  languages?: Record<string, number> | undefined
  /** Company ids run from 1 to this. */
  companies?: number
  generatedAt?: string
}

export interface WriteOptions extends GenerateOptions {
  /** 'pretty' matches JSON.stringify(snapshot, null, 2); 'lines' puts each item on one line. */
  format?: 'pretty' | 'lines'
}

export interface CompanySummary {
  id: number
  name: string
  /** Items per language linked to this company. */
  items: Record<string, number>
}

export interface WriteResult {
  path: string
  bytes: number
  format: 'pretty' | 'lines'
  items: Record<string, number>
  /** Every company id, most linked in the first language first. */
  companies: CompanySummary[]
}

export const DEFAULT_SEED = 1
export const DEFAULT_ITEMS = 340
export const DEFAULT_COMPANIES = 30
export const DEFAULT_GENERATED_AT = '2026-11-20T09:30:00Z'
export const DEFAULT_OUT = 'data/snapshot.json'

// Shares of the en count for the secondary languages of the default set.
const DEFAULT_LANGUAGE_SHARES: ReadonlyArray<readonly [string, number]> = [['en', 1], ['es', 0.35], ['fr', 0.25]]
// Pretty-printing triples the whitespace; past this many items a human no longer reads the file anyway.
const PRETTY_MAX_ITEMS = 5000
const ITEMS_PER_COMPANY = 50
// Zipf exponent for company popularity: one company dominates, a long tail has a handful of items each.
const ZIPF_EXPONENT = 1.2
const SPAN_DAYS = 3 * 365
const DAY_MS = 86_400_000

// ---------------------------------------------------------------------------------------------------------
// Randomness: everything derives from (seed, stream name), so adding a draw in one stream never shifts another.

function hashString (text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  h ^= h >>> 16
  return h >>> 0
}

/** The seeded random source of the generator; the benchmark draws its workloads from it too. */
export class Rng {
  private state: number

  constructor (seed: number, stream: string) {
    this.state = hashString(`${seed}/${stream}`)
  }

  // mulberry32
  float (): number {
    this.state = (this.state + 0x6d2b79f5) | 0
    let t = Math.imul(this.state ^ (this.state >>> 15), 1 | this.state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** Integer in [min, max]. */
  int (min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1))
  }

  chance (p: number): boolean {
    return this.float() < p
  }

  pick<T> (list: readonly T[]): T {
    return at(list, Math.floor(this.float() * list.length))
  }

  /** Index drawn from cumulative weights. */
  weighted (cumulative: Float64Array): number {
    const target = this.float() * (cumulative[cumulative.length - 1] ?? 0)
    let lo = 0
    let hi = cumulative.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if ((cumulative[mid] ?? 0) > target) hi = mid
      else lo = mid + 1
    }
    return lo
  }

  shuffle<T extends { length: number, [index: number]: unknown }> (list: T): T {
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(this.float() * (i + 1))
      const tmp = list[i]
      list[i] = list[j]
      list[j] = tmp
    }
    return list
  }
}

function at<T> (list: readonly T[], index: number): T {
  const value = list[index]
  if (value === undefined) throw new RangeError(`index ${index} outside a list of ${list.length}`)
  return value
}

function cumulativeOf (weights: readonly number[]): Float64Array {
  const out = new Float64Array(weights.length)
  let sum = 0
  weights.forEach((w, i) => { sum += w; out[i] = sum })
  return out
}

// ---------------------------------------------------------------------------------------------------------
// Word lists. Headlines stay neutral business news: the companies are real, the events are not.

const REAL_COMPANIES = [
  'Société Générale', 'Nestlé', 'Siemens', 'Glencore', 'Telefónica', 'L\'Oréal', 'Danone', 'Carrefour', 'Repsol',
  'Iberdrola', 'Inditex', 'Volkswagen', 'BASF', 'Bayer', 'TotalEnergies', 'Rio Tinto', 'Vale', 'Shell', 'Unilever',
  'Adidas', 'H&M', 'Ferrero', 'Aldi Süd', 'Crédit Agricole', 'BNP Paribas', 'Banco Santander', 'BBVA', 'Engie',
  'Électricité de France', 'Bolloré', 'Anglo American', 'Petrobras', 'Cemex', 'Grupo México', 'Südzucker', 'Nokia',
  'Ericsson', 'Equinor', 'Maersk', 'Heineken', 'Holcim', 'Stellantis', 'Thyssenkrupp', 'Mondelēz International',
  'Ørsted', 'Škoda Auto', 'Grupo Bimbo', 'Codelco', 'Ecopetrol', 'Lindt & Sprüngli', 'Zürich Insurance', 'Migros'
]
const NAME_STEMS = [
  'Altiplano', 'Nordhavn', 'Vértice', 'Boréal', 'Sierra Dorada', 'Keystone', 'Lumière', 'Río Claro', 'Baltica',
  'Meridian', 'Østfold', 'Sahel', 'Cordillera', 'Pacífico', 'Rhône', 'Andina', 'Atlas', 'Kivu', 'Mekong',
  'Tierra Verde', 'Helvetia', 'Zambeze', 'Carpathia', 'Orinoco', 'Bengal', 'Fjordlys', 'Savanna', 'Cascadia',
  'Danubia', 'Patagonia'
]
const NAME_TRADES = [
  'Mining', 'Textiles', 'Energía', 'Foods', 'Logistics', 'Holdings', 'Agro', 'Pharma', 'Telecom', 'Construction',
  'Minerals', 'Retail', 'Bank', 'Shipping', 'Solar', 'Chemicals', 'Apparel', 'Cacao', 'Metals', 'Paper'
]
const NAME_FORMS = ['Group', 'International', 'S.A.', 'GmbH', 'Ltd', 'SAS', 'AG', 'plc']

const PLACES = [
  'São Paulo', 'Bogotá', 'Medellín', 'Zürich', 'Montréal', 'Córdoba', 'Düsseldorf', 'Genève', 'Yaoundé', 'Lomé',
  'Asunción', 'Kraków', 'Malmö', 'Antofagasta', 'Cajamarca', 'Ciudad Juárez', 'Dhaka', 'Jakarta', 'Lagos', 'Nairobi',
  'Johannesburg', 'Ho Chi Minh City', 'Chennai', 'Shenzhen', 'Lima', 'Abidjan', 'Lubumbashi', 'Temuco', 'Potosí',
  'Mérida', 'Valparaíso', 'Tromsø', 'Reykjavík', 'Oaxaca', 'Cusco', 'Iquique', 'Mombasa', 'Accra', 'Casablanca'
]
const ANALYSTS = ['Morgan Stanley', 'BBVA Research', 'Berenberg', 'Jefferies', 'UBS', 'Bankinter', 'Oddo BHF', 'Natixis']
const IMAGE_SUBJECTS = [
  'factory-floor', 'solar-panels', 'open-pit-mine', 'port-cranes', 'cocoa-farm', 'office-tower', 'garment-workers',
  'wind-farm', 'copper-cathodes', 'warehouse', 'oil-refinery', 'river-community', 'lithium-brine-ponds', 'shareholder-meeting',
  'delivery-riders', 'data-centre', 'palm-oil-plantation', 'press-conference'
]
const IMAGE_SIZES: ReadonlyArray<readonly [number, number]> = [
  [800, 450], [1200, 675], [1024, 768], [800, 600], [1200, 800], [600, 600], [640, 960], [1600, 900], [320, 180]
]
const INTERNAL_NOTES = [
  'Imported from the legacy CMS; check formatting.', 'Image credit to be confirmed before republishing.',
  'Merged with a duplicate entry.', 'Abstract shortened by the editor.'
]

interface TextBank {
  readonly language: string
  readonly section: string
  readonly decimal: string
  readonly thousands: string
  readonly quotes: ReadonlyArray<readonly [string, string]>
  readonly titles: { readonly company: readonly string[], readonly pair: readonly string[], readonly none: readonly string[] }
  /** Story themes in the same order in every language, so a theme's refs agree across languages. */
  readonly themes?: readonly string[]
  readonly storyTitles?: readonly string[]
  readonly sentences: { readonly company: readonly string[], readonly none: readonly string[] }
  /** First-person lines for abstracts that quote a company statement. */
  readonly statements: readonly string[]
  readonly vocab: Readonly<Record<string, readonly string[]>>
  readonly money: (rng: Rng) => string
  /** Contractions the templates cannot know about (de + les → des). */
  readonly tidy?: (text: string) => string
}

const amount = (rng: Rng): { millions: number, billions: string, big: boolean } => ({
  millions: rng.int(5, 95) * 10,
  billions: (rng.int(11, 125) / 10).toFixed(1).replace(/\.0$/, ''),
  big: rng.chance(0.3)
})

const BANKS = {
  en: {
    language: 'English',
    section: 'latest-news',
    decimal: '.',
    thousands: ',',
    quotes: [['“', '”'], ['"', '"']],
    titles: {
      company: [
        '{c} reports {resultsAdj} {period} results {resultsWhy}',
        '{c} to invest {money} in new {facility} in {place}',
        '{c} publishes {lastYear} sustainability report, sets new targets on {topic}',
        'Investors press {c} for more detail on {topic}',
        '{c} responds to questions about {topic} in {place}',
        'Unions and {c} reach agreement on {labour} at {place} site',
        '{c} appoints new {role} amid review of {topic}',
        '{c} signs {contract} to supply {product} in {place}',
        '{c} outlines plan to cut {metricPlan} by {pctInt}% by {targetYear}',
        'Shareholders back resolution asking {c} to report on {topic}',
        '{c} opens consultation with communities near {place} project'
      ],
      pair: [
        '{c} and {c2} announce partnership on {topic}',
        '{c} agrees to buy stake in {c2} unit for {money}',
        'Suppliers to {c} and {c2} sign pledge on {labour}'
      ],
      none: [
        'Report examines {topic} across the {sector} sector',
        'Regulators in {place} open consultation on {topic}',
        'New law in {place} requires companies to disclose {disclosure}',
        '{sector} companies in {place} face rising pressure over {topic}',
        'Study finds uneven progress on {topic} among {sector} firms'
      ]
    },
    themes: [
      'Transition minerals tracker', 'Garment workers & living wages', 'Corporate due diligence in Europe',
      'Just transition in the energy sector', 'Technology & data privacy', 'Cocoa supply chains',
      'Renewable energy & indigenous peoples’ rights', 'Migrant workers in the Gulf', 'Lithium in the Andes',
      'Climate litigation against companies'
    ],
    storyTitles: ['{theme}: {storySub}', '{theme}: {monthName} {year} update'],
    sentences: {
      company: [
        '{c} said on {weekday} that it would {action}, a step it described as central to its strategy to {targetYear}.',
        'In a statement to {source}, a spokesperson for {c} said the company had {pastAction} and would publish an update in {when}.',
        'According to {source}, the plan covers {num} sites in {place} and {place2} and is expected to affect about {bigNum} employees.',
        'Trade unions in {place} welcomed the announcement but asked for more detail on {topic}.',
        'Analysts at {analyst} described the figures as {assessment}, pointing to {factor}.',
        'Revenue rose {pct}% to {money}, while the operating margin moved to {pct2}%.',
        '{c} said it had shared its response with the researchers and remained open to dialogue with affected communities.',
        'The company expects the new {facility} in {place} to be fully operational by {when}.',
        'Investors representing {money} in assets have asked {c} to publish {disclosure}.',
        'Local organisations in {place} said consultation had so far been limited and called for {recommendation}.'
      ],
      none: [
        'The report, based on interviews with {num} workers, managers and suppliers, recommends {recommendation}.',
        'Researchers reviewed public disclosures from {num} companies operating in {place} and {place2}.',
        'Officials in {place} said the rules would take effect in {when} after a period of consultation.',
        'Industry groups said they supported the aim of the proposal but warned about {factor}.',
        'Fewer than {pctInt}% of the companies assessed had published {disclosure}.',
        'Civil society groups in {place} said the findings matched what they had documented since {lastYear}.'
      ]
    },
    statements: [
      'We take these concerns seriously and have asked our suppliers in {place} for a full account of the situation.',
      'We are committed to respecting human rights across our operations and expect the same of our business partners.',
      'Our {lastYear} report sets out the progress we have made on {topic} and the areas where we must do more.',
      'We have engaged an independent auditor and will share the findings with the affected workers and their representatives.',
      'This investment reflects our long-term commitment to {place} and to a fair energy transition.',
      'We regret any impact on the communities concerned and remain open to dialogue.'
    ],
    vocab: {
      topic: [
        'supply chain due diligence', 'living wages', 'water use', 'carbon emissions', 'worker safety',
        'indigenous land rights', 'lithium mining', 'the energy transition', 'data privacy', 'packaging waste',
        'freedom of association', 'cocoa sourcing', 'recruitment fees for migrant workers', 'deforestation-free sourcing'
      ],
      sector: ['mining', 'garment', 'food and beverage', 'energy', 'technology', 'banking', 'construction', 'cocoa', 'automotive'],
      facility: ['factory', 'solar plant', 'mine', 'refinery', 'desalination plant', 'regional headquarters', 'distribution centre', 'battery plant'],
      role: ['chief financial officer', 'chief executive', 'head of sustainability', 'chief procurement officer', 'board chair'],
      resultsAdj: ['strong', 'better-than-expected', 'weaker', 'record', 'mixed'],
      period: ['third-quarter', 'first-half', 'full-year', 'second-quarter'],
      resultsWhy: ['as sales rise in Latin America', 'as copper prices recover', 'despite weak demand in Europe', 'on cost cuts', 'as online orders climb'],
      labour: ['wages', 'working hours', 'safety measures', 'temporary contracts', 'union recognition'],
      contract: ['ten-year contract', 'multi-year agreement', 'framework deal'],
      product: ['wind turbines', 'green hydrogen', 'copper concentrate', 'rail equipment', 'cloud services', 'fertiliser'],
      metricPlan: ['emissions', 'water consumption', 'plastic waste', 'coal use'],
      disclosure: ['supplier lists', 'scope 3 emissions data', 'human rights impact assessments', 'supply chain wage data'],
      action: [
        'tighten audits of its suppliers', 'close two older plants', 'expand its renewable power purchases',
        'revise its human rights policy', 'hire {bigNum} people', 'move part of its production to {place2}'
      ],
      pastAction: [
        'commissioned an independent audit', 'met its main suppliers', 'temporarily suspended shipments',
        'reviewed its climate commitments', 'set up a grievance hotline for workers'
      ],
      assessment: ['solid', 'disappointing', 'better than expected', 'cautious'],
      factor: ['rising energy costs', 'weak demand in Europe', 'regulatory uncertainty', 'currency swings', 'higher financing costs'],
      recommendation: [
        'greater transparency about suppliers', 'accessible grievance mechanisms',
        'meaningful participation of affected communities', 'regular independent audits'
      ],
      when: ['early {targetYear}', 'mid-{targetYear}', 'late {targetYear}', 'the first half of {targetYear}'],
      weekday: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'],
      source: ['Reuters', 'the Financial Times', 'Bloomberg', 'the Guardian', 'Le Monde', 'El País', 'Handelsblatt', 'Les Échos'],
      storySub: ['company responses and latest developments', 'what we know so far', 'timeline of key events', 'updates from the ground'],
      monthName: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
    },
    money: (rng) => {
      const a = amount(rng)
      const cur = rng.pick(['€', '$', '£'])
      return a.big ? `${cur}${a.billions}bn` : `${cur}${a.millions}m`
    }
  },
  es: {
    language: 'Español',
    section: 'últimas-noticias',
    decimal: ',',
    thousands: '.',
    quotes: [['«', '»'], ['“', '”'], ['"', '"']],
    titles: {
      company: [
        '{c} presenta resultados {resultsAdj} del {period} gracias a {driver}',
        '{c} invertirá {money} en una nueva {facility} en {place}',
        '{c} publica su informe de sostenibilidad {lastYear} con nuevos objetivos sobre {topic}',
        'Inversores piden a {c} más información sobre {topic}',
        '{c} responde a preguntas sobre {topic} en {place}',
        'Sindicatos y {c} alcanzan un acuerdo sobre {labour} en la planta de {place}',
        '{c} nombra a un nuevo {role} en plena revisión de {topic}',
        '{c} abre una consulta con las comunidades cercanas al proyecto de {place}',
        '{c} se compromete a reducir {metricPlan} un {pctInt} % antes de {targetYear}'
      ],
      pair: [
        '{c} y {c2} anuncian una alianza sobre {topic}',
        '{c} comprará una participación en una filial de {c2} por {money}'
      ],
      none: [
        'Un informe analiza {topic} en el sector {sector}',
        'Las autoridades de {place} abren una consulta sobre {topic}',
        'Una nueva ley en {place} obliga a las empresas a divulgar {disclosure}',
        'Un estudio revela avances desiguales en {topic} entre las empresas del sector {sector}'
      ]
    },
    themes: [
      'Monitor de minerales de transición', 'Trabajadoras textiles y salarios dignos', 'Diligencia debida empresarial en Europa',
      'Transición justa en el sector energético', 'Tecnología y privacidad de datos', 'Cadenas de suministro del cacao',
      'Energías renovables y derechos de los pueblos indígenas', 'Trabajadores migrantes en el Golfo', 'El litio en los Andes',
      'Litigios climáticos contra empresas'
    ],
    storyTitles: ['{theme}: {storySub}', '{theme}: actualización de {monthName} de {year}'],
    sentences: {
      company: [
        '{c} anunció el {weekday} que {action}, una decisión que enmarca en su estrategia hasta {targetYear}.',
        'Según {source}, el plan abarca {num} centros en {place} y {place2} y afectará a unos {bigNum} empleados.',
        'Un portavoz de {c} explicó a {source} que la compañía {pastAction} y que publicará una actualización {when}.',
        'Los sindicatos de {place} celebraron el anuncio, aunque pidieron más detalles sobre {topic}.',
        'Los analistas de {analyst} calificaron las cifras de {assessment} y señalaron {factor}.',
        'La facturación creció un {pct} % hasta {money}, mientras que el margen operativo se situó en el {pct2} %.',
        '{c} aseguró que había compartido su respuesta con los investigadores y que sigue abierta al diálogo con las comunidades afectadas.',
        'Organizaciones locales de {place} afirmaron que las consultas han sido limitadas y reclamaron {recommendation}.'
      ],
      none: [
        'El informe, basado en entrevistas con {num} trabajadores, directivos y proveedores, recomienda {recommendation}.',
        'Los investigadores revisaron la información publicada por {num} empresas con actividad en {place} y {place2}.',
        'Menos del {pctInt} % de las empresas evaluadas había publicado {disclosure}.',
        'Las patronales apoyaron el objetivo de la propuesta, pero advirtieron sobre {factor}.',
        'Las autoridades de {place} indicaron que las nuevas normas entrarán en vigor {when}.',
        'Organizaciones de la sociedad civil de {place} señalaron que las conclusiones coinciden con lo documentado desde {lastYear}.'
      ]
    },
    statements: [
      'Nos tomamos muy en serio estas preocupaciones y hemos pedido a nuestros proveedores en {place} una explicación completa.',
      'Estamos comprometidos con el respeto de los derechos humanos en todas nuestras operaciones y esperamos lo mismo de nuestros socios.',
      'Nuestro informe de {lastYear} recoge los avances en {topic} y los ámbitos en los que debemos mejorar.',
      'Hemos encargado una auditoría independiente y compartiremos los resultados con los trabajadores afectados y sus representantes.',
      'Lamentamos cualquier impacto en las comunidades afectadas y seguimos abiertos al diálogo.'
    ],
    vocab: {
      topic: [
        'la diligencia debida en la cadena de suministro', 'los salarios dignos', 'el uso del agua', 'las emisiones de carbono',
        'la seguridad de los trabajadores', 'los derechos de los pueblos indígenas', 'la minería de litio',
        'la transición energética', 'la privacidad de los datos', 'los residuos de envases', 'la libertad sindical',
        'el trabajo de los pequeños agricultores'
      ],
      sector: ['minero', 'textil', 'agroalimentario', 'energético', 'tecnológico', 'financiero', 'pesquero', 'del cacao', 'de la construcción'],
      facility: ['planta', 'fábrica', 'central solar', 'mina', 'refinería', 'planta desalinizadora', 'sede regional', 'terminal portuaria'],
      role: ['director financiero', 'consejero delegado', 'responsable de sostenibilidad', 'director de compras', 'presidente del consejo'],
      resultsAdj: ['sólidos', 'mejores de lo esperado', 'por debajo de lo previsto', 'récord', 'mixtos'],
      period: ['tercer trimestre', 'primer semestre', 'ejercicio', 'segundo trimestre'],
      driver: ['la demanda en Latinoamérica', 'la subida del precio del cobre', 'el recorte de costes', 'la expansión en España', 'las ventas en línea'],
      labour: ['los salarios', 'la jornada laboral', 'las medidas de seguridad', 'los contratos temporales', 'el derecho de asociación'],
      metricPlan: ['sus emisiones', 'el consumo de agua', 'los residuos plásticos', 'el uso de carbón'],
      disclosure: [
        'la lista de sus proveedores', 'sus emisiones de alcance 3', 'sus evaluaciones de impacto en derechos humanos',
        'los salarios pagados en su cadena de suministro'
      ],
      action: [
        'reforzará las auditorías a sus proveedores', 'cerrará dos plantas antiguas', 'ampliará sus compras de energía renovable',
        'revisará su política de derechos humanos', 'contratará a {bigNum} personas'
      ],
      pastAction: [
        'ha encargado una auditoría independiente', 'ha reunido a sus principales proveedores',
        'ha suspendido temporalmente los envíos', 'ha revisado sus compromisos climáticos'
      ],
      assessment: ['sólidas', 'decepcionantes', 'mejores de lo esperado', 'prudentes'],
      factor: ['el aumento de los costes energéticos', 'la debilidad de la demanda en Europa', 'la incertidumbre regulatoria', 'la volatilidad del tipo de cambio'],
      recommendation: [
        'una mayor transparencia sobre los proveedores', 'mecanismos de reclamación accesibles',
        'la participación de las comunidades afectadas', 'auditorías independientes periódicas'
      ],
      when: ['a principios de {targetYear}', 'a mediados de {targetYear}', 'a finales de {targetYear}', 'en el primer semestre de {targetYear}'],
      weekday: ['lunes', 'martes', 'miércoles', 'jueves', 'viernes'],
      source: ['El País', 'Expansión', 'Cinco Días', 'Reuters', 'la agencia EFE', 'El Espectador', 'La Tercera'],
      storySub: ['respuestas de las empresas y últimas novedades', 'lo que sabemos hasta ahora', 'cronología de los hechos'],
      monthName: ['enero', 'febrero', 'marzo', 'abril', 'mayo', 'junio', 'julio', 'agosto', 'septiembre', 'octubre', 'noviembre', 'diciembre']
    },
    money: (rng) => {
      const a = amount(rng)
      const cur = rng.pick(['euros', 'dólares'])
      return a.big ? `${a.billions.replace('.', ',')} mil millones de ${cur}` : `${a.millions} millones de ${cur}`
    },
    tidy: (text) => text.replace(/\bde el\b/g, 'del').replace(/\ba el\b/g, 'al')
  },
  fr: {
    language: 'Français',
    section: 'dernières-actualités',
    decimal: ',',
    // French typography groups thousands with a narrow no-break space.
    thousands: '\u202f',
    quotes: [['« ', ' »'], ['“', '”']],
    titles: {
      company: [
        '{c} publie des résultats {resultsAdj} pour le {period}',
        '{c} va investir {money} dans une nouvelle {facility} à {place}',
        '{c} répond aux questions sur {topic} à {place}',
        'Des investisseurs interpellent {c} sur {topic}',
        'Syndicats et {c} parviennent à un accord sur {labour} sur le site de {place}',
        '{c} publie son rapport de durabilité {lastYear} et fixe de nouveaux objectifs sur {topic}',
        '{c} nomme un nouveau {role} en pleine révision de {topic}',
        '{c} s’engage à réduire {metricPlan} de {pctInt} % d’ici {targetYear}',
        '{c} répond aux critiques sur {topic}'
      ],
      pair: [
        '{c} et {c2} annoncent un partenariat sur {topic}',
        '{c} va acquérir une participation dans une filiale de {c2} pour {money}'
      ],
      none: [
        'Un rapport examine {topic} dans le secteur {sector}',
        'Les autorités de {place} lancent une consultation sur {topic}',
        'Une nouvelle loi à {place} oblige les entreprises à publier {disclosure}',
        'Une étude constate des progrès inégaux sur {topic} dans le secteur {sector}'
      ]
    },
    themes: [
      'Observatoire des minerais de la transition', 'Ouvrières du textile et salaires décents', 'Devoir de vigilance en Europe',
      'Transition juste dans le secteur de l’énergie', 'Technologie et protection des données', 'Filières du cacao',
      'Énergies renouvelables et droits des peuples autochtones', 'Travailleurs migrants dans le Golfe', 'Le lithium dans les Andes',
      'Contentieux climatiques contre les entreprises'
    ],
    storyTitles: ['{theme} : {storySub}', '{theme} : point d’étape de {monthName} {year}'],
    sentences: {
      company: [
        '{c} a annoncé {weekday} qu’elle allait {action}, une décision présentée comme centrale dans sa stratégie à l’horizon {targetYear}.',
        'Selon {source}, le plan concerne {num} sites à {place} et à {place2} et touchera environ {bigNum} salariés.',
        'Un porte-parole de {c} a indiqué à {source} que le groupe {pastAction} et qu’il publiera un point d’étape {when}.',
        'Les syndicats de {place} ont salué l’annonce tout en réclamant des précisions sur {topic}.',
        'Les analystes de {analyst} jugent ces chiffres {assessment}, en soulignant {factor}.',
        'Le chiffre d’affaires a progressé de {pct} % à {money}, tandis que la marge opérationnelle s’établit à {pct2} %.',
        '{c} affirme avoir transmis sa réponse aux chercheurs et rester ouverte au dialogue avec les communautés concernées.',
        'Des associations locales de {place} estiment que la concertation reste limitée et demandent {recommendation}.'
      ],
      none: [
        'Le rapport, fondé sur des entretiens avec {num} travailleurs, cadres et fournisseurs, recommande {recommendation}.',
        'Les chercheurs ont examiné les informations publiées par {num} entreprises présentes à {place} et à {place2}.',
        'Moins de {pctInt} % des entreprises évaluées avaient publié {disclosure}.',
        'Les organisations patronales soutiennent l’objectif du texte mais mettent en garde contre {factor}.',
        'Les autorités de {place} indiquent que les nouvelles règles entreront en vigueur {when}.',
        'Des organisations de la société civile de {place} notent que ces conclusions rejoignent ce qu’elles documentent depuis {lastYear}.'
      ]
    },
    statements: [
      'Nous prenons ces préoccupations très au sérieux et avons demandé à nos fournisseurs à {place} un compte rendu complet.',
      'Nous nous engageons à respecter les droits humains dans l’ensemble de nos activités et attendons la même chose de nos partenaires.',
      'Notre rapport {lastYear} présente nos progrès sur {topic} et les domaines où nous devons faire davantage.',
      'Nous avons mandaté un auditeur indépendant et partagerons ses conclusions avec les travailleurs concernés et leurs représentants.',
      'Nous regrettons tout impact sur les communautés concernées et restons ouverts au dialogue.'
    ],
    vocab: {
      topic: [
        'le devoir de vigilance', 'les salaires décents', 'l’utilisation de l’eau', 'les émissions de carbone',
        'la sécurité des travailleurs', 'les droits des peuples autochtones', 'l’extraction du cobalt',
        'la transition énergétique', 'la protection des données', 'les déchets d’emballage', 'la liberté syndicale',
        'la chaîne d’approvisionnement du cacao'
      ],
      sector: ['minier', 'textile', 'agroalimentaire', 'énergétique', 'bancaire', 'numérique', 'de la construction', 'du cacao'],
      facility: ['usine', 'centrale solaire', 'mine', 'raffinerie', 'plateforme logistique', 'usine de dessalement', 'filiale régionale'],
      role: ['directeur financier', 'directeur général', 'responsable du développement durable', 'directeur des achats', 'président du conseil'],
      resultsAdj: ['solides', 'meilleurs que prévu', 'inférieurs aux attentes', 'record', 'mitigés'],
      period: ['troisième trimestre', 'premier semestre', 'exercice', 'deuxième trimestre'],
      labour: ['les salaires', 'le temps de travail', 'les mesures de sécurité', 'les contrats précaires', 'le droit syndical'],
      metricPlan: ['ses émissions', 'sa consommation d’eau', 'ses déchets plastiques', 'son recours au charbon'],
      disclosure: [
        'la liste de leurs fournisseurs', 'leurs émissions de scope 3', 'leurs études d’impact sur les droits humains',
        'les salaires versés dans leur chaîne d’approvisionnement'
      ],
      action: [
        'renforcer les audits de ses fournisseurs', 'fermer deux sites vieillissants', 'étendre ses achats d’électricité renouvelable',
        'réviser sa politique en matière de droits humains', 'recruter {bigNum} personnes'
      ],
      pastAction: [
        'a commandé un audit indépendant', 'a réuni ses principaux fournisseurs',
        'a suspendu temporairement les livraisons', 'a revu ses engagements climatiques'
      ],
      assessment: ['solides', 'décevants', 'meilleurs que prévu', 'prudents'],
      factor: ['la hausse des coûts de l’énergie', 'la faiblesse de la demande en Europe', 'l’incertitude réglementaire', 'la volatilité des changes'],
      recommendation: [
        'davantage de transparence sur les fournisseurs', 'des mécanismes de réclamation accessibles',
        'la participation des communautés concernées', 'des audits indépendants réguliers'
      ],
      when: ['début {targetYear}', 'mi-{targetYear}', 'fin {targetYear}', 'au premier semestre {targetYear}'],
      weekday: ['lundi', 'mardi', 'mercredi', 'jeudi', 'vendredi'],
      source: ['Le Monde', 'Les Échos', 'l’AFP', 'Reuters', 'Le Figaro', 'La Tribune', 'Jeune Afrique'],
      storySub: ['réponses des entreprises et derniers développements', 'ce que l’on sait', 'chronologie des faits'],
      monthName: ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre']
    },
    money: (rng) => {
      const a = amount(rng)
      const dollars = rng.chance(0.3)
      return a.big
        ? `${a.billions.replace('.', ',')} milliards ${dollars ? 'de dollars' : 'd’euros'}`
        : `${a.millions} millions ${dollars ? 'de dollars' : 'd’euros'}`
    },
    tidy: (text) => text
      .replace(/\bde les\b/g, 'des').replace(/\bde le\b/g, 'du')
      .replace(/\bà les\b/g, 'aux').replace(/\bà le\b/g, 'au')
      .replace(/\bde (?=[AEIOUÉÈÊÎÔ])/g, 'd’')
  },
  // de and pt appear only as the original language of untranslated items, so they carry no story themes.
  de: {
    language: 'Deutsch',
    section: 'neueste-nachrichten',
    decimal: ',',
    thousands: '.',
    quotes: [['„', '“'], ['"', '"']],
    titles: {
      company: [
        '{c} meldet {resultsAdj} Zahlen für das {period}',
        '{c} investiert {money} in neues {facility} in {place}',
        '{c} äußert sich zu Fragen zum Thema {topic}',
        'Gewerkschaften und {c} einigen sich über {labour} am Standort {place}',
        'Investoren fordern von {c} mehr Angaben zum Thema {topic}',
        '{c} veröffentlicht Nachhaltigkeitsbericht {lastYear}',
        '{c} will {metricPlan} bis {targetYear} um {pctInt} Prozent senken'
      ],
      pair: ['{c} und {c2} kündigen Partnerschaft zum Thema {topic} an'],
      none: [
        'Studie untersucht {topic} in der {sector}',
        'Behörden in {place} starten Konsultation zum Thema {topic}',
        'Neues Gesetz in {place} verpflichtet Unternehmen zur Offenlegung von {disclosure}'
      ]
    },
    sentences: {
      company: [
        '{c} kündigte am {weekday} an, {action}; der Schritt sei zentral für die Strategie bis {targetYear}.',
        'Laut {source} betrifft der Plan {num} Standorte in {place} und {place2} sowie rund {bigNum} Beschäftigte.',
        'Ein Sprecher von {c} sagte gegenüber {source}, das Unternehmen {pastAction} und werde {when} einen Zwischenbericht vorlegen.',
        'Gewerkschaften in {place} begrüßten die Ankündigung, forderten aber mehr Details zum Thema {topic}.',
        'Analysten von {analyst} bewerteten die Zahlen als {assessment} und verwiesen auf {factor}.',
        'Der Umsatz stieg um {pct} Prozent auf {money}, die operative Marge lag bei {pct2} Prozent.'
      ],
      none: [
        'Der Bericht stützt sich auf Interviews mit {num} Beschäftigten, Führungskräften und Zulieferern und empfiehlt {recommendation}.',
        'Weniger als {pctInt} Prozent der untersuchten Unternehmen haben {disclosure} veröffentlicht.',
        'Wirtschaftsverbände unterstützen das Ziel, warnen aber vor zusätzlicher Bürokratie.',
        'Die Behörden in {place} erklärten, die neuen Regeln würden {when} in Kraft treten.'
      ]
    },
    statements: [
      'Wir nehmen diese Bedenken sehr ernst und haben unsere Zulieferer in {place} um eine vollständige Darstellung gebeten.',
      'Wir bekennen uns zur Achtung der Menschenrechte in allen unseren Geschäftsbereichen und erwarten dies auch von unseren Partnern.',
      'Wir haben einen unabhängigen Prüfer beauftragt und werden die Ergebnisse mit den betroffenen Beschäftigten teilen.',
      'Wir bedauern jede Beeinträchtigung der betroffenen Gemeinden und bleiben gesprächsbereit.'
    ],
    vocab: {
      topic: [
        'Lieferkettensorgfalt', 'existenzsichernde Löhne', 'Wasserverbrauch', 'CO₂-Emissionen', 'Arbeitssicherheit',
        'Rechte indigener Völker', 'Lithiumabbau', 'Energiewende', 'Datenschutz', 'Verpackungsmüll', 'Gewerkschaftsfreiheit'
      ],
      sector: ['Bergbaubranche', 'Textilbranche', 'Lebensmittelindustrie', 'Energiewirtschaft', 'Finanzbranche', 'Kakaoindustrie'],
      facility: ['Werk', 'Solarkraftwerk', 'Logistikzentrum', 'Forschungszentrum', 'Regionalbüro'],
      resultsAdj: ['starke', 'überraschend gute', 'schwächere', 'gemischte'],
      period: ['dritte Quartal', 'erste Halbjahr', 'Geschäftsjahr'],
      labour: ['Löhne', 'Arbeitszeiten', 'Sicherheitsmaßnahmen', 'befristete Verträge'],
      metricPlan: ['seine Emissionen', 'seinen Wasserverbrauch', 'seinen Plastikmüll'],
      disclosure: ['Lieferantenlisten', 'Scope-3-Emissionen', 'Lohndaten aus der Lieferkette'],
      action: [
        'die Prüfungen seiner Zulieferer zu verschärfen', 'zwei ältere Werke zu schließen', 'mehr Ökostrom einzukaufen',
        'seine Menschenrechtsrichtlinie zu überarbeiten', '{bigNum} neue Stellen zu schaffen'
      ],
      pastAction: [
        'habe eine unabhängige Prüfung in Auftrag gegeben', 'habe die wichtigsten Zulieferer an einen Tisch geholt',
        'habe Lieferungen vorübergehend ausgesetzt', 'habe seine Klimaziele überprüft'
      ],
      assessment: ['solide', 'enttäuschend', 'besser als erwartet', 'vorsichtig'],
      factor: ['steigende Energiekosten', 'die schwache Nachfrage in Europa', 'regulatorische Unsicherheit', 'Wechselkursschwankungen'],
      recommendation: ['mehr Transparenz über Zulieferer', 'zugängliche Beschwerdemechanismen', 'regelmäßige unabhängige Prüfungen'],
      when: ['Anfang {targetYear}', 'Mitte {targetYear}', 'Ende {targetYear}', 'im ersten Halbjahr {targetYear}'],
      weekday: ['Montag', 'Dienstag', 'Mittwoch', 'Donnerstag', 'Freitag'],
      source: ['dem Handelsblatt', 'der Süddeutschen Zeitung', 'der Nachrichtenagentur dpa', 'Reuters', 'der NZZ']
    },
    money: (rng) => {
      const a = amount(rng)
      return a.big ? `${a.billions.replace('.', ',')} Milliarden Euro` : `${a.millions} Millionen Euro`
    }
  },
  pt: {
    language: 'Português',
    section: 'últimas-notícias',
    decimal: ',',
    thousands: '.',
    quotes: [['“', '”'], ['"', '"']],
    titles: {
      company: [
        '{c} anuncia investimento de {money} em nova {facility} em {place}',
        '{c} divulga resultados {resultsAdj} no {period}',
        '{c} responde a perguntas sobre {topic}',
        'Sindicatos e {c} chegam a acordo sobre {labour} em {place}',
        '{c} publica relatório de sustentabilidade de {lastYear}'
      ],
      pair: ['{c} e {c2} anunciam parceria sobre {topic}'],
      none: ['Relatório analisa {topic} no setor {sector}', 'Autoridades de {place} abrem consulta sobre {topic}']
    },
    sentences: {
      company: [
        '{c} anunciou na {weekday} que vai {action}, uma decisão que considera central para sua estratégia até {targetYear}.',
        'Segundo {source}, o plano abrange {num} unidades em {place} e {place2} e deve afetar cerca de {bigNum} funcionários.',
        'Um porta-voz da {c} afirmou que a empresa {pastAction} e que divulgará uma atualização {when}.',
        'Sindicatos de {place} elogiaram o anúncio, mas pediram mais detalhes sobre {topic}.',
        'A receita cresceu {pct}% para {money}, enquanto a margem operacional ficou em {pct2}%.'
      ],
      none: [
        'O relatório, baseado em entrevistas com {num} trabalhadores, gestores e fornecedores, recomenda {recommendation}.',
        'Menos de {pctInt}% das empresas avaliadas haviam publicado {disclosure}.',
        'As autoridades de {place} disseram que as novas regras entram em vigor {when}.'
      ]
    },
    statements: [
      'Levamos essas preocupações muito a sério e pedimos aos nossos fornecedores em {place} um relato completo da situação.',
      'Estamos comprometidos com o respeito aos direitos humanos em todas as nossas operações e esperamos o mesmo dos nossos parceiros.',
      'Contratamos uma auditoria independente e vamos compartilhar os resultados com os trabalhadores afetados.',
      'Lamentamos qualquer impacto sobre as comunidades afetadas e seguimos abertos ao diálogo.'
    ],
    vocab: {
      topic: [
        'a devida diligência na cadeia de suprimentos', 'salários dignos', 'o uso da água', 'as emissões de carbono',
        'a segurança dos trabalhadores', 'os direitos dos povos indígenas', 'a mineração de lítio', 'a transição energética',
        'a proteção de dados', 'a liberdade sindical'
      ],
      sector: ['de mineração', 'têxtil', 'agroalimentar', 'de energia', 'financeiro', 'do cacau'],
      facility: ['fábrica', 'usina solar', 'mina', 'refinaria', 'unidade de dessalinização'],
      resultsAdj: ['sólidos', 'acima do esperado', 'abaixo das previsões', 'recordes'],
      period: ['terceiro trimestre', 'primeiro semestre', 'exercício'],
      labour: ['os salários', 'a jornada de trabalho', 'as medidas de segurança', 'os contratos temporários'],
      action: [
        'reforçar as auditorias de fornecedores', 'fechar duas fábricas antigas', 'ampliar a compra de energia renovável',
        'revisar sua política de direitos humanos', 'contratar {bigNum} pessoas'
      ],
      pastAction: [
        'encomendou uma auditoria independente', 'reuniu seus principais fornecedores',
        'suspendeu temporariamente as entregas', 'revisou seus compromissos climáticos'
      ],
      recommendation: ['mais transparência sobre os fornecedores', 'mecanismos de reclamação acessíveis', 'a participação das comunidades afetadas'],
      disclosure: ['a lista de fornecedores', 'suas emissões de escopo 3', 'avaliações de impacto em direitos humanos'],
      when: ['no início de {targetYear}', 'em meados de {targetYear}', 'no fim de {targetYear}'],
      weekday: ['segunda-feira', 'terça-feira', 'quarta-feira', 'quinta-feira', 'sexta-feira'],
      source: ['a Reuters', 'o Valor Econômico', 'a Folha de S.Paulo', 'a agência Lusa']
    },
    money: (rng) => {
      const a = amount(rng)
      return a.big ? `R$ ${a.billions.replace('.', ',')} bilhões` : `R$ ${a.millions} milhões`
    }
  }
} satisfies Record<string, TextBank>
const BANK_BY_CODE: Readonly<Record<string, TextBank | undefined>> = BANKS

// Which language an untranslated item was originally written in, by how often each shows up on the site.
const SOURCE_LANGUAGE_WEIGHTS: ReadonlyArray<readonly [string, number]> = [['en', 6], ['es', 3], ['fr', 2.5], ['de', 1.5], ['pt', 1]]

function baseLanguage (code: string): string {
  return code.split('-')[0] ?? code
}

// Languages without a word list of their own are written in English.
function bankFor (code: string): TextBank {
  return BANK_BY_CODE[code] ?? BANK_BY_CODE[baseLanguage(code)] ?? BANKS.en
}

// ---------------------------------------------------------------------------------------------------------
// Planning: the parts that need a view of a whole language (company links, burst days, pks) are
// fixed up front in small typed arrays, so items themselves can be produced one at a time.

interface Companies {
  count: number
  /** names[id]; index 0 unused. */
  names: string[]
  /** Popularity rank → company id, so that id 1 is not automatically the biggest. */
  idByRank: Int32Array
}

interface LanguagePlan {
  code: string
  count: number
  /** Linked companies per item, lead company first. */
  links: number[][]
  burstDays: Int32Array
  burstCumulative: Float64Array
  pks: Int32Array
}

interface Context {
  seed: number
  generatedAt: string
  endDay: number
  companies: Companies
  plans: LanguagePlan[]
}

function syntheticName (k: number): string {
  const stem = at(NAME_STEMS, k % NAME_STEMS.length)
  const trade = at(NAME_TRADES, Math.floor(k / NAME_STEMS.length) % NAME_TRADES.length)
  const combos = NAME_STEMS.length * NAME_TRADES.length
  if (k < combos) return `${stem} ${trade}`
  const round = Math.floor(k / combos)
  const form = at(NAME_FORMS, (round - 1) % NAME_FORMS.length)
  const lap = Math.floor((round - 1) / NAME_FORMS.length)
  return lap === 0 ? `${stem} ${trade} ${form}` : `${stem} ${trade} ${form} ${lap + 1}`
}

function buildCompanies (seed: number, count: number): Companies {
  const rng = new Rng(seed, 'companies')
  const idByRank = new Int32Array(count)
  for (let i = 0; i < count; i++) idByRank[i] = i + 1
  rng.shuffle(idByRank)
  const real = rng.shuffle([...REAL_COMPANIES])
  const names: string[] = new Array<string>(count + 1).fill('')
  for (let rank = 0; rank < count; rank++) {
    const id = idByRank[rank] ?? 0
    names[id] = rank < real.length ? at(real, rank) : syntheticName(rank - real.length)
  }
  return { count, names, idByRank }
}

// How many companies one item is linked to: mostly one or two, some none, a few many.
const LINKS_PER_ITEM = cumulativeOf([0.08, 0.46, 0.27, 0.12, 0.05, 0.02])
const MAX_LINKS = LINKS_PER_ITEM.length - 1

/** Largest-remainder apportionment of `total` over `weights`, no share above `cap`. */
function apportion (total: number, weights: Float64Array, cap: number): Int32Array {
  const n = weights.length
  const quotas = new Int32Array(n)
  let sum = 0
  for (const w of weights) sum += w
  const remainders: Array<[number, number]> = []
  let given = 0
  for (let r = 0; r < n; r++) {
    const exact = total * (weights[r] ?? 0) / sum
    const whole = Math.min(cap, Math.floor(exact))
    quotas[r] = whole
    given += whole
    remainders.push([r, exact - whole])
  }
  remainders.sort((a, b) => b[1] - a[1] || a[0] - b[0])
  for (let pass = 0; given < total && pass < 2; pass++) {
    // The second pass only runs when caps bit: hand what is left to whoever still has room, most popular first.
    const order = pass === 0 ? remainders.map(([r]) => r) : Array.from({ length: n }, (_, r) => r)
    for (const r of order) {
      if (given >= total) break
      const q = quotas[r] ?? 0
      if (q >= cap) continue
      quotas[r] = pass === 0 ? q + 1 : Math.min(cap, q + (total - given))
      given += (quotas[r] ?? 0) - q
    }
  }
  return quotas
}

function planLinks (seed: number, code: string, count: number, primary: boolean, companies: Companies): number[][] {
  const rng = new Rng(seed, `links:${code}`)
  const wanted = new Uint8Array(count)
  let total = 0
  let linkedItems = 0
  for (let i = 0; i < count; i++) {
    const k = Math.min(rng.weighted(LINKS_PER_ITEM), companies.count)
    wanted[i] = k
    total += k
    if (k > 0) linkedItems++
  }
  const C = companies.count
  const weights = new Float64Array(C)
  for (let r = 0; r < C; r++) {
    // Secondary languages jitter the weights so their rankings resemble, but do not copy, the first one.
    weights[r] = (primary ? 1 : 0.5 + rng.float()) / Math.pow(r + 1, ZIPF_EXPONENT)
  }
  const quotas = apportion(total, weights, linkedItems)
  if (C >= 3 && total >= 2 * C) {
    // Edge cases front-end developers must see whatever the seed: the two rarest companies have exactly one
    // item in the first language, and the rarest has none at all in the others.
    const before = (quotas[C - 1] ?? 0) + (quotas[C - 2] ?? 0)
    if (primary) {
      quotas[C - 1] = 1
      quotas[C - 2] = 1
    } else {
      quotas[C - 1] = 0
    }
    quotas[0] = (quotas[0] ?? 0) + before - (quotas[C - 1] ?? 0) - (quotas[C - 2] ?? 0)
  }

  let tokenCount = 0
  for (const q of quotas) tokenCount += q
  const tokens = new Int32Array(tokenCount)
  let t = 0
  quotas.forEach((q, rank) => { tokens.fill(companies.idByRank[rank] ?? 0, t, t + q); t += q })
  rng.shuffle(tokens)

  // Deal tokens to items in order; a token the item already holds is swapped with one a little further on.
  const links: number[][] = []
  let next = 0
  for (let i = 0; i < count; i++) {
    const mine: number[] = []
    for (let s = 0; s < (wanted[i] ?? 0) && next < tokens.length; s++) {
      const limit = Math.min(tokens.length, next + 64)
      let j = next
      while (j < limit && mine.includes(tokens[j] ?? 0)) j++
      if (j === limit) break
      const token = tokens[j] ?? 0
      tokens[j] = tokens[next] ?? 0
      tokens[next] = token
      next++
      mine.push(token)
    }
    links.push(mine)
  }
  // Leftovers (duplicates stranded at the end of the deck) go to random items that can still take them.
  for (; next < tokens.length; next++) {
    const token = tokens[next] ?? 0
    for (let attempt = 0; attempt < 200; attempt++) {
      const target = at(links, rng.int(0, count - 1))
      if (target.length > 0 && target.length < MAX_LINKS && !target.includes(token)) {
        target.push(token)
        break
      }
    }
  }
  return links
}

function planLanguage (seed: number, code: string, count: number, primary: boolean, companies: Companies): LanguagePlan {
  const links = planLinks(seed, code, count, primary, companies)
  const rng = new Rng(seed, `plan:${code}`)
  // News breaks in bursts: a few days carry many items, which also exercises the pk tie-break.
  const bursts = Math.max(4, Math.round(count / 20))
  const burstDays = new Int32Array(bursts)
  const burstWeights: number[] = []
  for (let b = 0; b < bursts; b++) {
    burstDays[b] = rng.int(0, SPAN_DAYS - 1)
    burstWeights.push(1 / Math.pow(b + 1, 0.8))
  }
  // pks: distinct draws from a range four times the item count, so they are sparse like real ids (deleted
  // pages leave gaps) and unrelated to date or file order.
  const range = new Int32Array(count * 4 + 7)
  const base = rng.int(2, 9) * 10_000
  for (let v = 0; v < range.length; v++) range[v] = base + v
  for (let i = 0; i < count; i++) {
    const j = rng.int(i, range.length - 1)
    const picked = range[j] ?? 0
    range[j] = range[i] ?? 0
    range[i] = picked
  }
  return { code, count, links, burstDays, burstCumulative: cumulativeOf(burstWeights), pks: range.slice(0, count) }
}

function isNonNegativeInteger (n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/

function prepare (options: GenerateOptions): Context {
  const seed = options.seed ?? DEFAULT_SEED
  if (!Number.isSafeInteger(seed)) throw new TypeError(`seed must be an integer, got ${seed}`)
  const items = options.items ?? DEFAULT_ITEMS
  if (!isNonNegativeInteger(items)) throw new TypeError(`items must be a non-negative integer, got ${items}`)
  const generatedAt = options.generatedAt ?? DEFAULT_GENERATED_AT
  const generatedMs = Date.parse(generatedAt)
  if (!DATE_TIME.test(generatedAt) || Number.isNaN(generatedMs)) {
    throw new TypeError(`generatedAt must be an ISO-8601 date-time such as ${DEFAULT_GENERATED_AT}, got ${generatedAt}`)
  }

  let counts: Array<[string, number]>
  if (options.languages !== undefined) {
    counts = Object.entries(options.languages)
    if (counts.length === 0) throw new TypeError('languages must name at least one language')
    const pattern = new RegExp(LANGUAGE_PATTERN)
    for (const [code, n] of counts) {
      if (!pattern.test(code)) throw new TypeError(`language segment ${JSON.stringify(code)} does not match ${LANGUAGE_PATTERN}`)
      if (!isNonNegativeInteger(n)) throw new TypeError(`item count for ${code} must be a non-negative integer, got ${n}`)
    }
  } else {
    counts = DEFAULT_LANGUAGE_SHARES.map(([code, share]) => [code, Math.round(items * share)])
  }

  const largest = Math.max(...counts.map(([, n]) => n))
  const companyCount = options.companies ?? Math.max(DEFAULT_COMPANIES, Math.round(largest / ITEMS_PER_COMPANY))
  if (!isNonNegativeInteger(companyCount) || companyCount < 1) {
    throw new TypeError(`companies must be a positive integer, got ${companyCount}`)
  }
  const companies = buildCompanies(seed, companyCount)
  const plans = counts.map(([code, n], index) => planLanguage(seed, code, n, index === 0, companies))
  // Backdates end on the snapshot's own (UTC) day, never after it.
  const endDay = Math.floor(generatedMs / DAY_MS)
  return { seed, generatedAt, endDay, companies, plans }
}

// ---------------------------------------------------------------------------------------------------------
// Text.

interface Fill {
  rng: Rng
  bank: TextBank
  lead: string | undefined
  second: string | undefined
  year: number
  month: number
}

const PLACEHOLDER = /\{(\w+)\}/g

function groupThousands (n: number, separator: string): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, separator)
}

function fill (template: string, f: Fill): string {
  return template.replace(PLACEHOLDER, (_match, key: string) => {
    const value = resolveKey(key, f)
    return value.includes('{') ? fill(value, f) : value
  })
}

function resolveKey (key: string, f: Fill): string {
  const { rng, bank } = f
  switch (key) {
    case 'c': return f.lead ?? 'the company'
    case 'c2': return f.second ?? f.lead ?? 'the company'
    case 'year': return String(f.year)
    case 'lastYear': return String(f.year - 1)
    case 'targetYear': return String(f.year + rng.int(1, 6))
    case 'num': return String(rng.int(3, 60))
    case 'bigNum': return groupThousands(rng.int(12, 950) * 10, bank.thousands)
    case 'pct':
    case 'pct2': return (rng.int(5, 249) / 10).toFixed(1).replace('.', bank.decimal)
    case 'pctInt': return String(rng.int(2, 12) * 5)
    case 'money': return bank.money(rng)
    case 'place':
    case 'place2': return rng.pick(PLACES)
    case 'analyst': return rng.pick(ANALYSTS)
    case 'monthName': return at(bank.vocab.monthName ?? BANKS.en.vocab.monthName, f.month)
    default: {
      const words = bank.vocab[key]
      if (words === undefined) throw new Error(`no words for {${key}} in ${bank.language}`)
      return rng.pick(words)
    }
  }
}

function capitalize (text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

// Django's slugify(allow_unicode=True): accented letters stay as they are, punctuation goes.
function slugify (text: string): string {
  return text.normalize('NFKC').toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}_\s-]/gu, '')
    .trim()
    .replace(/[-\s]+/gu, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
}

function uniqueSlug (taken: Map<string, number>, base: string): string {
  const seen = taken.get(base)
  if (seen === undefined) {
    taken.set(base, 1)
    return base
  }
  let n = seen + 1
  while (taken.has(`${base}-${n}`)) n++
  taken.set(base, n)
  taken.set(`${base}-${n}`, 1)
  return `${base}-${n}`
}

function headline (f: Fill, linked: number, story: boolean): string {
  const { rng, bank } = f
  if (story && bank.themes !== undefined && bank.storyTitles !== undefined) {
    const theme = rng.pick(bank.themes)
    return fill(rng.pick(bank.storyTitles).replace('{theme}', theme), f)
  }
  const pool = linked >= 2 && rng.chance(0.35)
    ? bank.titles.pair
    : linked >= 1 ? bank.titles.company : bank.titles.none
  return capitalize(tidy(bank, fill(rng.pick(pool), f)))
}

function tidy (bank: TextBank, text: string): string {
  return bank.tidy === undefined ? text : bank.tidy(text)
}

/** n distinct templates from pool (partial Fisher-Yates), filled. */
function sentencesFrom (f: Fill, pool: readonly string[], n: number): string[] {
  const order = Array.from(pool.keys())
  const chosen: string[] = []
  for (let i = 0; i < Math.min(n, pool.length); i++) {
    const j = f.rng.int(i, order.length - 1)
    const picked = order[j] ?? 0
    order[j] = order[i] ?? 0
    order[i] = picked
    chosen.push(tidy(f.bank, fill(at(pool, picked), f)))
  }
  return chosen
}

// Sentence counts tuned so an average item is ~1.4 KB of compact JSON.
const MIN_SENTENCES = 4
const MAX_SENTENCES = 9

function abstractText (f: Fill, linked: boolean): string {
  const { rng, bank } = f
  if (rng.chance(0.07)) return ''
  if (linked && rng.chance(0.1)) {
    // The editor quoted the company's own statement, quotation marks included.
    const [open, close] = rng.pick(bank.quotes)
    return `${open}${sentencesFrom(f, bank.statements, rng.int(2, 4)).join(' ')}${close}`
  }
  const pool = linked ? [...bank.sentences.company, ...bank.sentences.none] : bank.sentences.none
  return sentencesFrom(f, pool, rng.int(MIN_SENTENCES, MAX_SENTENCES)).join(' ')
}

// ---------------------------------------------------------------------------------------------------------
// Items.

function sourceLanguageWeights (listing: string): { codes: string[], cumulative: Float64Array } {
  const own = baseLanguage(listing)
  const kept = SOURCE_LANGUAGE_WEIGHTS.filter(([code]) => code !== own)
  return { codes: kept.map(([code]) => code), cumulative: cumulativeOf(kept.map(([, w]) => w)) }
}

function sectionFor (code: string): string {
  return BANK_BY_CODE[code]?.section ?? BANK_BY_CODE[baseLanguage(code)]?.section ?? 'latest-news'
}

function * itemsOf (ctx: Context, plan: LanguagePlan): Generator<SnapshotItem> {
  const rng = new Rng(ctx.seed, `items:${plan.code}`)
  const ownBank = bankFor(plan.code)
  const sources = sourceLanguageWeights(plan.code)
  const untranslatedShare = baseLanguage(plan.code) === 'en' ? 0.14 : 0.3
  const storyLanguages = ownBank.themes !== undefined ? [plan.code] : ['en']
  const slugs = new Map<string, number>()
  const { names } = ctx.companies

  for (let i = 0; i < plan.count; i++) {
    const dealt = plan.links[i] ?? []
    const offset = rng.chance(0.3)
      ? plan.burstDays[rng.weighted(plan.burstCumulative)] ?? 0
      // Outside bursts, recent days are busier than old ones.
      : Math.floor(SPAN_DAYS * Math.pow(rng.float(), 1.25))
    const date = new Date((ctx.endDay - offset) * DAY_MS)
    const backdate = date.toISOString().slice(0, 10)

    const untranslated = rng.chance(untranslatedShare)
    const source = untranslated ? at(sources.codes, rng.weighted(sources.cumulative)) : plan.code
    const f: Fill = {
      rng,
      bank: untranslated ? bankFor(source) : ownBank,
      lead: dealt[0] === undefined ? undefined : names[dealt[0]],
      second: dealt[1] === undefined ? undefined : names[dealt[1]],
      year: date.getUTCFullYear(),
      month: date.getUTCMonth()
    }
    const story = rng.chance(0.1)
    const title = headline(f, dealt.length, story)
    const slug = uniqueSlug(slugs, slugify(title))

    const translatedLanguages: SnapshotItem['translated_languages'] = []
    if (untranslated) {
      translatedLanguages.push({ language_code: source, language: bankFor(source).language, url: `/${source}/${sectionFor(source)}/${slug}/` })
      if (rng.chance(0.2)) {
        const other = at(sources.codes, rng.weighted(sources.cumulative))
        // Translations keep the source page's slug, as wagtail-localize does by default.
        if (other !== source) {
          translatedLanguages.push({ language_code: other, language: bankFor(other).language, url: `/${other}/${sectionFor(other)}/${slug}/` })
        }
      }
    }

    const abstract = abstractText(f, dealt.length > 0)

    let displayImage: SnapshotItem['display_image'] = null
    if (!rng.chance(1 / 3)) {
      const [width, height] = rng.pick(IMAGE_SIZES)
      const stamp = rng.int(0, 0xffffff).toString(16).padStart(6, '0')
      displayImage = {
        url: `https://media.example.org/images/${f.year}/${String(f.month + 1).padStart(2, '0')}/${rng.pick(IMAGE_SUBJECTS)}_${stamp}.fill-${width}x${height}.jpg`,
        width,
        height
      }
    }

    const stories: SnapshotItem['stories'] = []
    if (rng.chance(0.13)) {
      const refs = rng.chance(0.3) ? 2 : 1
      const themeCount = BANKS.en.themes.length
      const first = rng.int(0, themeCount - 1)
      for (let r = 0; r < refs; r++) {
        const theme = (first + r * rng.int(1, themeCount - 1)) % themeCount
        // Stories are not always translated: some refs point at another language's version.
        const lang = rng.chance(0.15) ? rng.pick(['en', 'es', 'fr'].filter(l => l !== plan.code)) : rng.pick(storyLanguages)
        const storyTitle = at(bankFor(lang).themes ?? [], theme)
        stories.push({ translated_title: storyTitle, translated_url: `/${lang}/stories/${slugify(storyTitle)}/` })
      }
    }

    const note = baseLanguage(plan.code) === 'en' && rng.chance(0.01) ? rng.pick(INTERNAL_NOTES) : undefined

    yield {
      pk: plan.pks[i] ?? 0,
      is_translated: !untranslated,
      translated_languages: translatedLanguages,
      translated_title: title,
      backdate,
      translated_abstract: abstract,
      display_image: displayImage,
      series: null,
      company_response_summary: { responses: 0, non_responses: 0 },
      company_response_responded: null,
      responded_to_article: null,
      translated_url: `/${plan.code}/${sectionFor(plan.code)}/${slug}/`,
      stories,
      story_item_count: null,
      content_type_display: story ? 'Story' : 'Article',
      untranslated_content_type: story ? 'storypage' : 'articlepage',
      // A field the schema does not know, so the service's forward compatibility gets exercised.
      ...(note === undefined ? {} : { internal_note: note }),
      companies: [...dealt].sort((a, b) => a - b)
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Public API.

export function generateSnapshot (options: GenerateOptions = {}): Snapshot {
  const ctx = prepare(options)
  const languages: Snapshot['languages'] = {}
  for (const plan of ctx.plans) languages[plan.code] = Array.from(itemsOf(ctx, plan))
  return { generated_at: ctx.generatedAt, languages }
}

function summarize (ctx: Context): CompanySummary[] {
  const byId = new Map<number, CompanySummary>()
  for (let id = 1; id <= ctx.companies.count; id++) {
    const items: Record<string, number> = {}
    for (const plan of ctx.plans) items[plan.code] = 0
    byId.set(id, { id, name: ctx.companies.names[id] ?? '', items })
  }
  for (const plan of ctx.plans) {
    for (const ids of plan.links) {
      for (const id of ids) {
        const entry = byId.get(id)
        if (entry !== undefined) entry.items[plan.code] = (entry.items[plan.code] ?? 0) + 1
      }
    }
  }
  const first = ctx.plans[0]?.code ?? ''
  return [...byId.values()].sort((a, b) => (b.items[first] ?? 0) - (a.items[first] ?? 0) || a.id - b.id)
}

/**
 * Streams the snapshot to `path` item by item (never one giant string), to a temporary file that is renamed
 * into place so a watching service never sees a half-written snapshot (devices and pipes such as /dev/stdout
 * are written directly). Same content as generateSnapshot();
 * 'pretty' output is byte-identical to JSON.stringify(snapshot, null, 2) plus a newline.
 */
export async function writeSnapshot (path: string, options: WriteOptions = {}): Promise<WriteResult> {
  const ctx = prepare(options)
  const total = ctx.plans.reduce((n, p) => n + p.count, 0)
  const format = options.format ?? (total <= PRETTY_MAX_ITEMS ? 'pretty' : 'lines')
  let target = resolve(path)
  let direct = false
  try {
    // Follow symlinks so the rename replaces the real file, not the link; never rename over a device or pipe.
    target = await realpath(target)
    direct = !(await stat(target)).isFile()
  } catch {
    await mkdir(dirname(target), { recursive: true })
  }
  const temporary = direct ? target : join(dirname(target), `.${basename(target)}.${process.pid}.tmp`)

  const out = createWriteStream(temporary, { encoding: 'utf8' })
  const failed = new Promise<never>((_resolve, reject) => { out.once('error', reject) })
  failed.catch(() => {})
  let bytes = 0
  let pending: string[] = []
  let pendingLength = 0

  const flush = async (): Promise<void> => {
    if (pending.length === 0) return
    const chunk = pending.join('')
    pending = []
    pendingLength = 0
    bytes += Buffer.byteLength(chunk, 'utf8')
    if (!out.write(chunk)) await Promise.race([once(out, 'drain'), failed])
  }
  // Batching small pieces into ~256 KB writes keeps per-write overhead negligible.
  const emit = async (piece: string): Promise<void> => {
    pending.push(piece)
    pendingLength += piece.length
    if (pendingLength >= 1 << 18) await flush()
  }

  try {
    await emit(`{\n  "generated_at": ${JSON.stringify(ctx.generatedAt)},\n  "languages": {`)
    for (const [l, plan] of ctx.plans.entries()) {
      await emit(`${l === 0 ? '' : ','}\n    ${JSON.stringify(plan.code)}: [`)
      let first = true
      for (const item of itemsOf(ctx, plan)) {
        const json = format === 'pretty'
          ? JSON.stringify(item, null, 2).replaceAll('\n', '\n      ')
          : JSON.stringify(item)
        await emit(`${first ? '' : ','}\n      ${json}`)
        first = false
      }
      await emit(first ? ']' : '\n    ]')
    }
    await emit(ctx.plans.length === 0 ? '}\n}\n' : '\n  }\n}\n')
    await flush()
    out.end()
    await Promise.race([finished(out), failed])
    if (!direct) await rename(temporary, target)
  } catch (err) {
    out.destroy()
    // Cleanup must not mask the error that matters.
    if (!direct) await rm(temporary, { force: true }).catch(() => {})
    throw err
  }

  const items: Record<string, number> = {}
  for (const plan of ctx.plans) items[plan.code] = plan.count
  return { path: target, bytes, format, items, companies: summarize(ctx) }
}

// ---------------------------------------------------------------------------------------------------------
// CLI.

const USAGE = `Usage: npx tsx scripts/generate-snapshot.ts [options]
  --items N          items in en (default ${DEFAULT_ITEMS}); es and fr get ~35% and ~25% of it
  --languages L      explicit counts instead, e.g. en=200000,es=0 (order is kept)
  --seed S           PRNG seed (default ${DEFAULT_SEED})
  --companies C      company ids 1..C (default max(${DEFAULT_COMPANIES}, largest language / ${ITEMS_PER_COMPANY}))
  --generated-at T   ISO-8601 timestamp of the snapshot (default ${DEFAULT_GENERATED_AT})
  --format F         pretty | lines (default pretty up to ${PRETTY_MAX_ITEMS} items, else one item per line)
  --out FILE         output path (default ${DEFAULT_OUT})`

function integerArg (name: string, value: string | undefined, signed = false): number | undefined {
  if (value === undefined) return undefined
  if (!(signed ? /^-?\d+$/ : /^\d+$/).test(value) || !Number.isSafeInteger(Number(value))) {
    throw new TypeError(`--${name} must be ${signed ? 'an' : 'a non-negative'} integer, got ${JSON.stringify(value)}`)
  }
  return Number(value)
}

function languagesArg (value: string | undefined): Record<string, number> | undefined {
  if (value === undefined) return undefined
  const out: Record<string, number> = {}
  for (const part of value.split(',')) {
    const [code = '', count] = part.split('=')
    out[code.trim()] = integerArg(`languages ${code}`, count?.trim()) ?? Number.NaN
  }
  return out
}

function formatBytes (bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${(bytes / 1e3).toFixed(1)} KB`
}

async function main (argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      items: { type: 'string' },
      languages: { type: 'string' },
      seed: { type: 'string' },
      companies: { type: 'string' },
      'generated-at': { type: 'string' },
      format: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  if (values.help === true) {
    console.log(USAGE)
    return
  }
  if (values.format !== undefined && values.format !== 'pretty' && values.format !== 'lines') {
    throw new TypeError(`--format must be pretty or lines, got ${JSON.stringify(values.format)}`)
  }
  const options: WriteOptions = {
    seed: integerArg('seed', values.seed, true) ?? DEFAULT_SEED,
    items: integerArg('items', values.items) ?? DEFAULT_ITEMS,
    languages: languagesArg(values.languages)
  }
  const companies = integerArg('companies', values.companies)
  if (companies !== undefined) options.companies = companies
  if (values['generated-at'] !== undefined) options.generatedAt = values['generated-at']
  if (values.format !== undefined) options.format = values.format

  const started = performance.now()
  const result = await writeSnapshot(values.out ?? DEFAULT_OUT, options)
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  const total = Object.values(result.items).reduce((a, b) => a + b, 0)

  console.log(`Wrote ${result.path}: ${formatBytes(result.bytes)} (${result.bytes} bytes, ${result.format}) in ${seconds} s`)
  console.log(`  items: ${Object.entries(result.items).map(([code, n]) => `${code} ${n}`).join(', ')} (${total} total, ` +
    `${total > 0 ? Math.round(result.bytes / total) : 0} bytes each)`)
  const first = Object.keys(result.items)[0] ?? ''
  const label = (c: CompanySummary): string => `#${c.id} ${c.name} (${c.items[first] ?? 0})`
  console.log(`  ${result.companies.length} companies; most items in ${first}: ${result.companies.slice(0, 3).map(label).join(', ')}`)
  const single = result.companies.filter(c => c.items[first] === 1)
  if (single.length > 0 && single.length <= 10) console.log(`  exactly one item in ${first}: ${single.map(label).join(', ')}`)
  for (const code of Object.keys(result.items).slice(1)) {
    const absent = result.companies.filter(c => (c.items[code] ?? 0) === 0)
    if (absent.length > 0) console.log(`  no items in ${code}: ${absent.length} companies, e.g. #${absent.map(c => c.id).slice(0, 5).join(', #')}`)
  }
}

// Run directly (not imported): compare real paths so symlinked checkouts and relative argv still match.
function runDirectly (): boolean {
  const entry = process.argv[1]
  if (entry === undefined) return false
  try {
    const self = realpathSync(fileURLToPath(import.meta.url))
    return pathToFileURL(realpathSync(entry)).href === pathToFileURL(self).href
  } catch {
    return false
  }
}

if (runDirectly()) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err)
    process.exitCode = 1
  })
}
